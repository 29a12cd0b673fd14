"""The configuration merge in a pass: which well-known configs apply, where they are found, baseRefs,
templates, validation and ``PresetsCombined`` (KServe's ``config_merge.go``, its tests and the lifecycle
tests ``controller_int_config_not_found_test.go`` / ``config_validation_int_test.go`` at 6c74cae8d)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmisvc_core.merge import config_merge
from llmisvc_core.world.config import Environment
from llmisvc_core.world.status_merge import merge_status
from tests import builders as b
from tests.builders import plans

Wire = dict[str, Any]
PRESETS: Wire = {"route": {}, "gateway": {}, "scheduler": {}}
INGRESS = ("kserve", "kserve-ingress-gateway")


def _world() -> list[Wire]:
    return [b.gateway_class(), b.gateway(INGRESS[1], INGRESS[0], addresses=["203.0.113.50"])]


def _route(plan: Any) -> Wire:
    (route,) = plans.applied(plan, "HTTPRoute")
    return route


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ({}, ["config-llm-template"]),
        ({"router": PRESETS}, ["config-llm-scheduler", "config-llm-router-route", "config-llm-template"]),
        (
            {"router": {"scheduler": {"pool": {"ref": {"name": "p"}}}, "route": {}}},
            ["config-llm-router-route", "config-llm-template"],
        ),
        ({"router": {"route": {"http": {"refs": [{"name": "r"}]}}}}, ["config-llm-template"]),
        ({"tracing": {}}, ["config-llm-tracing", "config-llm-template"]),
        ({"prefill": {}}, ["config-llm-prefill-template", "config-llm-decode-template"]),
        ({"worker": {}, "parallelism": {"data": 2, "dataLocal": 1}}, ["config-llm-worker-data-parallel"]),
        ({"worker": {}, "parallelism": {"pipeline": 2}}, ["config-llm-worker-pipeline-parallel"]),
        (
            {
                "router": {
                    "scheduler": {"config": {"inline": {"plugins": [{"type": "predicted-latency-producer"}]}}}
                }
            },
            ["config-llm-scheduler", "config-llm-scheduler-latency-predictor", "config-llm-template"],
        ),
    ],
    ids=[
        "single-node",
        "router",
        "pool-ref",
        "route-refs",
        "tracing",
        "prefill-decode",
        "data-parallel",
        "pipeline",
        "latency",
    ],
)
def test_well_known_configs_follow_the_spec_shape(spec: Wire, names: list[str]) -> None:
    assert config_merge.well_known_names(spec, "kserve-") == ["kserve-" + n for n in names]


def test_why_1_minimal_router_routes_by_model_from_the_workload_preset() -> None:
    """No annotation on the service: KServe's workload preset turns model-based routing on. The route preset
    of KServe aaac4e294 gives 12 rules (#5822, #5826) and three base URLs: `/` (model routing),
    `/ns/svc` and the publisher path `/publishers/ns/models/<model>` (#5822), which gets an address of its
    own with the publisher and the bare model name."""
    plan = plans.run(b.service(router=PRESETS), *_world())

    rules = _route(plan)["spec"]["rules"]
    assert len(rules) == 12
    assert any(r["name"] == "v1-catch-all-model-routing" for r in rules)
    by_url = {a["url"]: a for a in plan.status["addresses"]}
    assert list(by_url) == [
        "http://203.0.113.50/",
        "http://203.0.113.50/ns/svc",
        "http://203.0.113.50/publishers/ns/models/svc",
    ]
    assert by_url["http://203.0.113.50/"]["name"] == "gateway-external-model-routing"
    publisher = by_url["http://203.0.113.50/publishers/ns/models/svc"]
    assert publisher["name"] == "gateway-external"
    assert [m["name"] for m in publisher["models"]] == ["publishers/ns/models/svc", "svc"]
    assert plan.status["url"] == "http://203.0.113.50/ns/svc"


def test_why_2_scheduler_template_override_keeps_the_epp_service_ports() -> None:
    plan = plans.run(
        b.service(router={**PRESETS, "scheduler": {"template": {"serviceAccountName": "x"}}}), *_world()
    )

    (epp,) = plans.applied(plan, "Service")
    assert [p["name"] for p in epp["spec"]["ports"]] == ["grpc", "grpc-health", "metrics", "zmq"]


def test_applied_configs_name_the_presets_and_the_namespace_they_came_from() -> None:
    local = b.llmisvc_config("kserve-config-llm-template", "ns", annotations={"team": "a"})
    system = b.llmisvc_config(
        "kserve-config-llm-router-route",
        "kserve",
        router={"route": {"http": {"spec": {"hostnames": ["api.example.com"]}}}},
    )
    plan = plans.run(b.service(router={"route": {}, "gateway": {}}), *_world(), local, system)

    assert plan.status["appliedConfigs"] == [
        {"name": "kserve-config-llm-router-route", "namespace": "kserve", "source": "Preset"},
        {"name": "kserve-config-llm-template", "namespace": "ns", "source": "Preset"},
    ]
    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and presets["status"] == "True" and "reason" not in presets
    # The system namespace's route config replaced KServe's shipped one entirely.
    assert _route(plan)["spec"]["hostnames"] == ["api.example.com"]


def test_built_in_copies_stand_in_for_missing_well_known_configs_and_status_says_so() -> None:
    plan = plans.run(b.service(router=PRESETS), *_world())

    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and presets["status"] == "True"
    assert presets["reason"] == "BuiltInConfigs"
    assert "kserve-config-llm-router-route" in presets["message"]


def test_a_namespace_local_config_overrides_the_system_namespace_one() -> None:
    system = b.llmisvc_config(
        "kserve-config-llm-router-route",
        "kserve",
        router={"route": {"http": {"spec": {"hostnames": ["system.example.com"]}}}},
    )
    local = b.llmisvc_config(
        "kserve-config-llm-router-route",
        "ns",
        router={"route": {"http": {"spec": {"hostnames": ["local.example.com"]}}}},
    )
    plan = plans.run(b.service(router={"route": {}, "gateway": {}}), *_world(), system, local)

    assert _route(plan)["spec"]["hostnames"] == ["local.example.com"]


def test_prefix_comes_from_the_environment() -> None:
    custom = b.llmisvc_config(
        "acme-config-llm-router-route",
        "kserve",
        router={"route": {"http": {"spec": {"hostnames": ["acme.example.com"]}}}},
    )
    plan = plans.run(
        b.service(router={"route": {}, "gateway": {}}),
        *_world(),
        custom,
        env=Environment(config_prefix="acme-"),
    )

    assert _route(plan)["spec"]["hostnames"] == ["acme.example.com"]
    assert {a["name"] for a in plan.status["appliedConfigs"]} == {
        "acme-config-llm-router-route",
        "acme-config-llm-template",
    }


def test_base_refs_apply_in_order_after_the_presets_and_before_the_spec() -> None:
    first = b.llmisvc_config(
        "team-a",
        "ns",
        router={"gateway": {"refs": [{"name": "team-gw", "namespace": "kserve"}]}},
        model={"name": "from-ref"},
    )
    second = b.llmisvc_config("team-b", "kserve", model={"name": "from-second-ref"})
    svc = b.service(router={"route": {}}, baseRefs=[{"name": "team-a"}, {"name": "team-b"}])
    plan = plans.run(
        svc, *_world(), b.gateway("team-gw", "kserve", addresses=["203.0.113.60"]), first, second
    )

    route = _route(plan)
    assert route["spec"]["parentRefs"] == [
        {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "team-gw", "namespace": "kserve"}
    ]
    (model_routing,) = [r for r in route["spec"]["rules"] if r["name"] == "v1-model-routing"]
    header = model_routing["matches"][0]["headers"][0]
    assert header["value"] == "publishers/ns/models/from-second-ref"
    assert plan.status["appliedConfigs"][-2:] == [
        {"name": "team-a", "namespace": "ns", "source": "UserRef"},
        {"name": "team-b", "namespace": "kserve", "source": "UserRef"},
    ]


def test_why_3_a_missing_base_ref_gives_presets_combined_false_and_no_writes() -> None:
    svc = b.service(router=PRESETS, baseRefs=[{"name": "missing"}])
    svc["status"] = {"appliedConfigs": [{"name": "missing", "namespace": "ns", "source": "UserRef"}]}
    plan = plans.run(svc, *_world())

    assert plan.apply == [] and plan.delete == []
    assert plan.outcome == "invalid-references"
    presets = plans.condition(plan, "PresetsCombined")
    assert presets == {
        "type": "PresetsCombined",
        "status": "False",
        "lastTransitionTime": b.NOW,
        "reason": "ConfigNotFound",
        "message": 'LLMInferenceServiceConfig "missing" not found in namespaces [ns kserve]',
    }
    assert "appliedConfigs" not in plan.status
    # KServe #5918: PresetsCombined is a dependent of Ready, which carries the merge's reason and message.
    assert plans.condition(plan, "Ready") == {**presets, "type": "Ready"}
    assert plans.condition(plan, "RouterReady") == {
        "type": "RouterReady",
        "status": "Unknown",
        "lastTransitionTime": b.NOW,
    }


def test_a_missing_base_ref_on_a_stopped_service_is_a_warning_and_the_stop_cleans_up() -> None:
    svc = b.stopped(b.service(router=PRESETS, baseRefs=[{"name": "missing"}]))
    plan = plans.run(svc, *_world(), b.http_route("svc-kserve-route", parents=[INGRESS], owner_uid=b.UID))

    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and presets["reason"] == "Stopped"
    assert presets["message"].startswith(
        'Service is stopped with warning: LLMInferenceServiceConfig "missing"'
    )
    assert [ref.name for ref in plan.delete] == ["svc-kserve-route"]


@pytest.mark.parametrize(
    ("router", "model", "message"),
    [
        (
            {"route": {"http": {"refs": [{"name": "mine"}]}}, "gateway": {}},
            None,
            'spec.router.route.http.refs: Invalid value: [{"name":"mine"}]: unsupported configuration: '
            "custom HTTP routes ('spec.router.route.http.refs') cannot be used with a managed gateway",
        ),
        (
            PRESETS,
            {"lora": {"adapters": [{"name": ""}]}},
            "spec.model.lora.adapters[0].name: Required value: adapter name is required",
        ),
        (
            PRESETS,
            {"name": "m", "lora": {"adapters": [{"name": "m"}]}},
            'adapter name must differ from base model name "m"',
        ),
        ({**PRESETS, "scheduler": {"replicas": 0}}, None, "scheduler replicas must be greater than zero"),
    ],
    ids=["route-refs-with-managed-gateway", "lora-empty-name", "lora-same-as-model", "scheduler-replicas"],
)
def test_why_5_a_merged_spec_the_validator_rejects_is_not_routed(
    router: Wire, model: Wire | None, message: str
) -> None:
    spec: dict[str, Any] = {"model": model} if model is not None else {}
    plan = plans.run(b.service(router=router, **spec), *_world())

    assert plan.apply == [] and plan.outcome == "failed"
    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and presets["reason"] == "CombineBaseError"
    assert presets["message"].startswith('LLMInferenceService.serving.kserve.io "svc" is invalid: ')
    assert message in presets["message"]
    assert plan.message == f"failed to combine base-configurations: {presets['message']}"


def test_an_unsupported_template_names_the_config_and_the_expression() -> None:
    bad = b.llmisvc_config(
        "team",
        "ns",
        router={"route": {"http": {"spec": {"hostnames": ["{{ .GlobalConfig.CredentialConfig }}"]}}}},
    )
    plan = plans.run(
        b.service(router={"route": {}, "gateway": {}}, baseRefs=[{"name": "team"}]), *_world(), bad
    )

    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and presets["reason"] == "CombineBaseError"
    assert presets["message"] == (
        "failed to merge config: LLMInferenceServiceConfig ns/team: "
        "unsupported template expression {{ .GlobalConfig.CredentialConfig }}"
    )
    assert plan.apply == []


def test_fixing_the_missing_base_ref_recovers() -> None:
    svc = b.service(router=PRESETS, baseRefs=[{"name": "team"}])
    assert plans.run(svc, *_world()).outcome == "invalid-references"

    plan = plans.run(svc, *_world(), b.llmisvc_config("team", "ns"))
    assert plan.outcome == "reconciled"
    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and presets["status"] == "True"
    assert plans.applied(plan, "HTTPRoute")


def test_why_8_a_route_over_gateway_apis_match_limit_is_not_written_and_status_says_why() -> None:
    # The route preset of aaac4e294: 10 path matches, then 8 + 1 model-routing matches copied per adapter.
    adapters = [{"name": f"adapter-{i}"} for i in range(13)]
    plan = plans.run(
        b.service(router=PRESETS, model={"name": "base", "lora": {"adapters": adapters}}), *_world()
    )

    assert plans.applied(plan, "HTTPRoute") == []
    cond = plans.condition(plan, "HTTPRoutesReady")
    assert cond is not None and cond["reason"] == "HTTPRouteReconcileError"
    assert "ns/svc-kserve-route would have 136 matches across its rules, more than the 128" in cond["message"]
    seven = [{"name": f"adapter-{i}"} for i in range(7)]
    plan = plans.run(
        b.service(router=PRESETS, model={"name": "base", "lora": {"adapters": seven}}), *_world()
    )
    assert len(plans.applied(plan, "HTTPRoute")) == 1


_router_shapes = st.fixed_dictionaries(
    {},
    optional={
        "route": st.sampled_from([{}, {"http": {"spec": {"hostnames": ["h.example.com"]}}}]),
        "gateway": st.sampled_from([{}, {"refs": [{"name": INGRESS[1], "namespace": INGRESS[0]}]}]),
        "scheduler": st.sampled_from([{}, {"template": {"serviceAccountName": "x"}}]),
    },
)


@settings(max_examples=25, deadline=None)
@given(router=_router_shapes, adapters=st.integers(0, 3))
def test_property_a_pass_is_deterministic_and_an_empty_base_ref_changes_only_applied_configs(
    router: Wire, adapters: int
) -> None:
    model = {"name": "m", "lora": {"adapters": [{"name": f"a{i}"} for i in range(adapters)]}}
    plain = plans.run(b.service(router=router, model=model), *_world())
    assert plans.run(b.service(router=router, model=model), *_world()) == plain
    with_ref = plans.run(
        b.service(router=router, model=model, baseRefs=[{"name": "empty"}]),
        *_world(),
        b.llmisvc_config("empty", "ns"),
    )
    applied = with_ref.status.pop("appliedConfigs")
    assert applied[-1] == {"name": "empty", "namespace": "ns", "source": "UserRef"}
    plain.status.pop("appliedConfigs")
    assert with_ref == plain


def test_why_2_kserves_precise_prefix_sample_keeps_the_preset_scheduler_and_its_ports() -> None:
    """The router part of KServe's sample ``precise-prefix-kv-cache-routing`` (an inline EPP config)."""
    inline = {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": [{"type": "single-profile-handler"}, {"type": "precise-prefix-cache-scorer"}],
    }
    router = {"scheduler": {"config": {"inline": inline}}, "route": {}, "gateway": {}}
    plan = plans.run(b.service(router=router), *_world())

    assert plan.outcome == "reconciled"
    (epp,) = plans.applied(plan, "Service")
    assert [p["name"] for p in epp["spec"]["ports"]] == ["grpc", "grpc-health", "metrics", "zmq"]


def test_5918_ready_is_not_true_off_stale_conditions_when_the_merge_fails() -> None:
    """KServe f2849c052 / #5918 (``llm_inference_service_lifecycle.go``): a service that was Ready and
    whose merge now fails is Ready=False with the merge's reason, though RouterReady and WorkloadsReady
    stay True."""
    svc = b.service(router=PRESETS, baseRefs=[{"name": "missing"}])
    svc["status"] = {
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            for t in ("PresetsCombined", "Ready", "RouterReady", "WorkloadsReady")
        ]
    }
    plan = plans.run(svc, *_world())
    ready = plans.condition(plan, "Ready")
    assert ready is not None and (ready["status"], ready["reason"]) == ("False", "ConfigNotFound")
    router = plans.condition(plan, "RouterReady")
    assert router is not None and router["status"] == "True"
    assert merge_status(svc["status"], plan.status)["conditions"][1]["status"] == "False"
