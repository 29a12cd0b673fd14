"""``status.router`` updated in place, as KServe does since #5798 (item 8 of the head delta).

Upstream at ``aaac4e294``: ``pkg/controller/v1alpha2/llmisvc/router.go`` ``updateRoutingStatus`` (sets only
``.Gateways``, creating ``status.router`` when there is none), ``EvaluateInferencePoolConditions`` (clears
``.Scheduler`` when no scheduler is configured), ``scheduler.go`` ``setRoutingPoolStatus`` (never creates
``status.router``) and ``reconcileHTTPRoutes`` (clears ``.Group`` for an ungrouped service); PR #5798
(cd6f54190). The observable difference from 6c74cae8d, which built a fresh ``status.router`` on every
pass: a pass that fails on the referenced InferencePool keeps the scheduler the previous pass recorded.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests import builders as b
from tests.builders import Wire, plans

V1 = "inference.networking.k8s.io"
INGRESS = ("kserve", "kserve-ingress-gateway")
STORED = "stored"  # the expected field is the one the service had before the pass
NEW_GATEWAYS = [f"{INGRESS[0]}/{INGRESS[1]}"]


def _ref(kind: str, name: str, group: str = "") -> Wire:
    return {"group": group, "kind": kind, "name": name}


STORED_ROUTER: Wire = {
    "gateways": [
        {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "old-gw", "namespace": "old"}
    ],
    "scheduler": {
        "inferencePool": _ref("InferencePool", "old-pool", V1),
        "service": _ref("Service", "old-epp"),
    },
    "group": {"name": "old-group", "members": [{"name": "svc", "weight": 1}]},
}


def _world(*extra: Wire) -> list[Wire]:
    return [b.gateway_class(), b.gateway(INGRESS[1], INGRESS[0], addresses=["203.0.113.50"]), *extra]


def _pool(name: str) -> Wire:
    pool = b.inference_pool(name, namespace="ns")
    pool["spec"] = {"selector": {"matchLabels": {"app": "x"}}, "targetPorts": [{"number": 8000}]}
    return pool


def _scheduler(pool: str, service: str = "svc-epp-service") -> Wire:
    return {"inferencePool": _ref("InferencePool", pool, V1), "service": _ref("Service", service)}


def _observed(router: Wire | None) -> dict[str, Any] | None:
    """The parts of ``status.router`` a case looks at: gateway names, scheduler and group as written."""
    if router is None:
        return None
    gateways = router.get("gateways")
    return {
        "gateways": [f"{g['namespace']}/{g['name']}" for g in gateways] if gateways is not None else None,
        "scheduler": router.get("scheduler"),
        "group": router.get("group"),
    }


def _expected(gateways: Any, scheduler: Any, group: Any) -> dict[str, Any]:
    stored = _observed(STORED_ROUTER) or {}
    return {
        "gateways": stored["gateways"] if gateways == STORED else gateways,
        "scheduler": stored["scheduler"] if scheduler == STORED else scheduler,
        "group": stored["group"] if group == STORED else group,
    }


IN_PLACE = [
    pytest.param(
        {"route": {}, "gateway": {}, "scheduler": {"pool": {"ref": {"name": "missing"}}}},
        [],
        {},
        _expected(NEW_GATEWAYS, STORED, None),
        "failed",
        id="inference_pool_fetch_error_keeps_the_recorded_scheduler",
    ),
    pytest.param(
        {"route": {}, "gateway": {}, "scheduler": {"pool": {"ref": {"name": "mine"}}}},
        [_pool("mine")],
        {},
        _expected(NEW_GATEWAYS, _scheduler("mine"), None),
        "reconciled",
        id="a_found_referenced_pool_replaces_the_scheduler",
    ),
    pytest.param(
        b.presets(),
        [],
        {},
        _expected(NEW_GATEWAYS, _scheduler("svc-inference-pool"), None),
        "reconciled",
        id="a_managed_scheduler_replaces_the_scheduler",
    ),
    pytest.param(
        {"route": {}, "gateway": {}},
        [],
        {},
        _expected(NEW_GATEWAYS, None, None),
        "reconciled",
        id="the_scheduler_is_cleared_when_the_spec_has_none",
    ),
    pytest.param(
        b.presets(),
        [],
        {"stopped": True},
        None,
        "reconciled",
        id="a_stopped_service_has_no_router_status",
    ),
    pytest.param(
        {"scheduler": {}},
        [],
        {},
        None,
        "reconciled",
        id="no_route_no_router_status_even_with_a_scheduler",
    ),
    pytest.param(
        {"route": {"http": {"refs": [{"name": "absent"}]}}},
        [],
        {},
        _expected(STORED, STORED, STORED),
        "invalid-references",
        id="a_pass_ending_before_the_routes_keeps_it_whole",
    ),
]


@pytest.mark.parametrize(("router", "objects", "extra", "expected", "outcome"), IN_PLACE)
def test_5798_status_router_is_updated_in_place(
    router: Wire, objects: list[Wire], extra: dict[str, Any], expected: Wire | None, outcome: str
) -> None:
    svc = b.service(router=router, status={"router": STORED_ROUTER}, **extra)
    plan = plans.run(svc, *_world(*objects))
    assert plan.outcome == outcome, plan.message
    assert _observed(plan.status.get("router")) == expected


def test_5798_a_referenced_pool_that_disappears_keeps_the_previous_pass_scheduler() -> None:
    """The head delta's side effect: the pass after the pool's deletion fails with InferencePoolFetchError
    and keeps the scheduler reference the pass before it wrote, where 6c74cae8d reset it."""
    svc = b.service(router={"route": {}, "gateway": {}, "scheduler": {"pool": {"ref": {"name": "mine"}}}})
    cluster = plans.apply_plan(
        [svc, *_world(_pool("mine"))], plans.run(svc, *_world(_pool("mine"))), ("ns", "svc")
    )
    first = next(o for o in cluster if o["kind"] == "LLMInferenceService")
    assert first["status"]["router"]["scheduler"] == _scheduler("mine")
    plan = plans.run(first, *[o for o in cluster if o is not first and o["kind"] != "InferencePool"])
    ready = plans.condition(plan, "InferencePoolReady")
    assert ready is not None and ready["reason"] == "InferencePoolFetchError"
    assert plan.status["router"]["scheduler"] == _scheduler("mine")


def test_5798_a_first_pass_writes_only_what_its_steps_set() -> None:
    """A fresh service gets ``status.router`` from the gateways step only: no scheduler for a service
    without one, no group for an ungrouped one."""
    plan = plans.run(b.service(router={"route": {}, "gateway": {}}), *_world())
    assert _observed(plan.status.get("router")) == {
        "gateways": NEW_GATEWAYS,
        "scheduler": None,
        "group": None,
    }
