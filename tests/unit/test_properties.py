"""Invariants of the pass over generated services and clusters (hypothesis)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmisvc_core.planner.plan import PassPlan
from tests import builders as b
from tests.builders import Wire, plans

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
names = st.from_regex(r"[a-z]([-a-z0-9]{0,70}[a-z0-9])?", fullmatch=True)
listeners = st.lists(
    st.builds(
        lambda i, proto, port, host: {"name": f"l{i}", "protocol": proto, "port": port, **host},
        st.integers(0, 99),
        st.sampled_from(["HTTP", "HTTPS", "TLS", "TCP"]),
        st.sampled_from([80, 443, 8080, 8443]),
        st.sampled_from([{}, {"hostname": "*.example.com"}, {"hostname": "api.example.com"}]),
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda listener: listener["name"],
)
routers = st.fixed_dictionaries(
    {},
    optional={
        "route": st.just({}),
        "gateway": st.sampled_from(
            [{}, {"refs": [{"name": "kserve-ingress-gateway", "namespace": "kserve"}]}]
        ),
        "scheduler": st.sampled_from([{}, {"pool": {"ref": {"name": "external-pool"}}}]),
    },
)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[Wire, list[Wire]]:
    name = draw(names)
    router = draw(st.one_of(st.none(), routers))
    svc = b.service(name, "team", router=router, model={"name": draw(st.sampled_from(["m", "org/model"]))})
    if draw(st.booleans()):
        svc["spec"]["annotations"] = {"serving.kserve.io/model-based-routing-enabled": "true"}
        svc["spec"]["model"]["lora"] = {"adapters": [{"name": a} for a in draw(st.lists(names, max_size=2))]}
    if draw(st.booleans()):
        b.stopped(svc)
    gateway = b.gateway(
        "kserve-ingress-gateway",
        "kserve",
        listeners=draw(listeners),
        addresses=draw(st.lists(st.sampled_from(["203.0.113.1", "10.0.0.1", "lb.example.com"]), max_size=2)),
    )
    pool = {
        "apiVersion": "inference.networking.k8s.io/v1",
        "kind": "InferencePool",
        "metadata": {"name": "external-pool", "namespace": "team"},
        "spec": {"targetPorts": [{"number": 8000}]},
    }
    return svc, [b.gateway_class(), gateway, pool]


def _plan(cluster: list[Wire]) -> PassPlan:
    svc = next(o for o in cluster if o["kind"] == "LLMInferenceService")
    return plans.run(svc, *[o for o in cluster if o is not svc])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_idempotence_a_plan_carried_out_and_planned_again_writes_nothing(
    case: tuple[Wire, list[Wire]],
) -> None:
    svc, objects = case
    first = plans.run(svc, *objects)
    after = plans.apply_plan([svc, *objects], first, (svc["metadata"]["namespace"], svc["metadata"]["name"]))
    second = _plan(after)
    assert second.apply == [], second.apply
    assert second.delete == []


@settings(max_examples=150, deadline=None)
@given(clusters())
def test_derived_names_are_dns_labels_of_at_most_63_characters(case: tuple[Wire, list[Wire]]) -> None:
    svc, objects = case
    plan = plans.run(svc, *objects)
    for manifest in plan.apply:
        name = manifest["metadata"]["name"]
        assert len(name) <= 63 and DNS_LABEL.match(name), name


@settings(max_examples=100, deadline=None)
@given(clusters())
def test_output_order_is_stable_and_sorted(case: tuple[Wire, list[Wire]]) -> None:
    svc, objects = case
    plan = plans.run(svc, *objects)
    assert plan == plans.run(svc, *reversed(objects))
    keys = [(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]) for o in plan.apply]
    assert keys == sorted(keys)
