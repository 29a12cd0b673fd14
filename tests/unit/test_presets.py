"""KServe's shipped presets merged as KServe merges them, and the merge-time adjustments (spec 1.1,
Appendix F; route shapes of edges 56, 60-65). P10's own list rule is superseded by the strategic merge."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.httproute.managed import expected_http_route
from llmisvc_core.merge.presets import apply_router_presets
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world import derivative
from llmisvc_core.world.config import RouterConfig

HEADER = "X-Gateway-Model-Name"
V1 = "inference.networking.k8s.io"
V1ALPHA2 = "inference.networking.x-k8s.io"
CONFIG = RouterConfig()
TIMEOUTS = {"backendRequest": "0s", "request": "0s"}
INGRESS_PARENT = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "kserve-ingress-gateway",
    "namespace": "kserve",
}


def _svc(router: dict[str, Any] | None, name: str = "svc", **spec: Any) -> LLMInferenceService:
    return LLMInferenceService.from_wire(
        {"metadata": {"name": name, "namespace": "ns", "uid": "uid-1"}, "spec": {"router": router, **spec}}
    )


def _route_spec(svc: LLMInferenceService) -> Any:
    return svc.to_wire()["spec"]["router"]["route"]["http"]["spec"]


def _rewrite(replacement: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "URLRewrite",
            "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": replacement}},
        }
    ]


ENDPOINTS = ("v1/completions", "v1/chat/completions", "v1/responses", "v1/messages")


def _path_rule(name: str, backend: dict[str, Any], path: str, rewrite: str) -> dict[str, Any]:
    return {
        "name": name,
        "backendRefs": [backend],
        "matches": [{"path": {"type": "PathPrefix", "value": path}}],
        "filters": _rewrite(rewrite),
        "timeouts": TIMEOUTS,
    }


def _appendix_f_rules(
    pool_backend: dict[str, Any], service_backend: dict[str, Any], model: str, prefix: str = "/ns/svc"
) -> list[dict[str, Any]]:
    """The twelve rules of ``kserve-config-llm-router-route`` at KServe aaac4e294 (#5822 added the publisher
    paths, #5826 folded the four model-routing rules into one), written out independently of the module."""
    header = {"type": "Exact", "name": HEADER, "value": f"publishers/ns/models/{model}"}
    publisher = f"/publishers/ns/models/{model}"
    rules = [
        _path_rule(f"{e.replace('/', '-')}-path", pool_backend, f"{prefix}/{e}", f"/{e}") for e in ENDPOINTS
    ]
    rules.append(
        {
            "name": "v1-model-routing",
            "backendRefs": [pool_backend],
            "matches": [
                {"path": {"type": "Exact", "value": f"/{e}{slash}"}, "headers": [header]}
                for e in ENDPOINTS
                for slash in ("", "/")
            ],
            "timeouts": TIMEOUTS,
        }
    )
    rules += [
        _path_rule(f"{e.replace('/', '-')}-publisher-path", pool_backend, f"{publisher}/{e}", f"/{e}")
        for e in ENDPOINTS
    ]
    rules.append(_path_rule("v1-publisher-path-catch-all", service_backend, publisher, "/"))
    rules.append(_path_rule("v1-catch-all-path", service_backend, prefix, "/"))
    rules.append(
        {
            "name": "v1-catch-all-model-routing",
            "backendRefs": [service_backend],
            "matches": [{"headers": [header]}],
            "timeouts": TIMEOUTS,
        }
    )
    return rules


def _pool(group: str = V1, name: str = "svc-inference-pool") -> dict[str, Any]:
    return {"group": group, "kind": "InferencePool", "name": name, "port": 8000, "weight": 1}


WORKLOAD_SERVICE = {"kind": "Service", "name": "svc-kserve-workload-svc", "port": 8000, "weight": 1}
WORKLOAD_SERVICE_EXPLICIT = {"group": "", **WORKLOAD_SERVICE}


def test_edge_56_minimal_router_gives_the_preset_route() -> None:
    svc = apply_router_presets(_svc({"route": {}, "gateway": {}, "scheduler": {}}), CONFIG)

    route = expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)

    assert route.to_wire()["spec"] == {
        "parentRefs": [INGRESS_PARENT],
        "rules": _appendix_f_rules(_pool(V1ALPHA2), WORKLOAD_SERVICE, "svc"),
    }
    assert route.metadata.labels == {
        "app.kubernetes.io/component": "llminferenceservice-router",
        "app.kubernetes.io/name": "svc",
        "app.kubernetes.io/part-of": "llminferenceservice",
    }
    assert [ref.uid for ref in route.metadata.owner_references or [] if ref.controller] == ["uid-1"]


def test_edge_56_scheduler_preset() -> None:
    svc = apply_router_presets(_svc({"route": {}, "gateway": {}, "scheduler": {}}), CONFIG)

    scheduler = svc.to_wire()["spec"]["router"]["scheduler"]

    assert scheduler["pool"] == {
        "spec": {
            "endpointPickerRef": {
                "kind": "Service",
                "name": "svc-epp-service",
                "port": {"number": 9002},
                "failureMode": "FailOpen",
            },
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/name": "svc",
                    "app.kubernetes.io/part-of": "llminferenceservice",
                    "kserve.io/component": "workload",
                }
            },
            "targetPorts": [{"number": 8000}],
        }
    }
    containers = {c["name"]: c for c in scheduler["template"]["containers"]}
    # KServe aaac4e294 (#5712): the UDS tokenizer left the scheduler pod for its own Deployment.
    assert list(containers) == ["main"]
    assert containers["main"]["ports"] == [
        {"name": "grpc", "containerPort": 9002, "protocol": "TCP"},
        {"name": "grpc-health", "containerPort": 9003, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        {"name": "zmq", "containerPort": 5557, "protocol": "TCP"},
    ]
    # Rendered with the service's names; TLS is off, so the conditional flags render empty.
    assert containers["main"]["command"][:4] == [
        "/app/epp",
        "--pool-name",
        "svc-inference-pool",
        "--pool-namespace",
    ]
    assert containers["main"]["command"][-1] == ""
    assert scheduler["template"]["serviceAccountName"] == "svc-epp-sa"


def test_edge_61_no_scheduler_points_default_backends_at_the_workload_service() -> None:
    svc = apply_router_presets(_svc({"route": {}, "gateway": {}}), CONFIG)

    route = expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)

    assert route.to_wire()["spec"]["rules"] == _appendix_f_rules(
        WORKLOAD_SERVICE_EXPLICIT, WORKLOAD_SERVICE, "svc"
    )
    assert svc.spec.router is not None and svc.spec.router.scheduler is None


def test_edge_60_pool_ref_names_the_external_pool_without_migration() -> None:
    svc = apply_router_presets(
        _svc({"route": {}, "gateway": {}, "scheduler": {"pool": {"ref": {"name": "svc-my-inf-pool"}}}}),
        CONFIG,
    )

    route = expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)

    assert route.to_wire()["spec"]["rules"] == _appendix_f_rules(
        _pool(V1, "svc-my-inf-pool"), WORKLOAD_SERVICE, "svc"
    )
    assert route.metadata.annotations is None
    assert svc.to_wire()["spec"]["router"]["scheduler"] == {"pool": {"ref": {"name": "svc-my-inf-pool"}}}


@pytest.mark.parametrize(
    ("refs", "parent_refs"),
    [
        (
            [{"name": "my-custom-gateway", "namespace": "ns"}],
            [
                {
                    "group": "gateway.networking.k8s.io",
                    "kind": "Gateway",
                    "name": "my-custom-gateway",
                    "namespace": "ns",
                }
            ],
        ),
        (
            [{"name": "my-custom-gateway", "namespace": "ns", "sectionName": "https"}],
            [
                {
                    "group": "gateway.networking.k8s.io",
                    "kind": "Gateway",
                    "name": "my-custom-gateway",
                    "namespace": "ns",
                    "sectionName": "https",
                }
            ],
        ),
        (
            [{"name": "a"}, {"name": "b", "namespace": "", "sectionName": ""}],
            [
                {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "a"},
                {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "b"},
            ],
        ),
    ],
    ids=["edge-65-ref-with-namespace", "edge-65-section-name", "empty-namespace-and-section-omitted"],
)
def test_edge_65_gateway_refs_replace_parent_refs(
    refs: list[dict[str, Any]], parent_refs: list[dict[str, Any]]
) -> None:
    user_spec = {"parentRefs": [{"name": "user-gateway"}]}
    svc = apply_router_presets(
        _svc({"route": {"http": {"spec": user_spec}}, "gateway": {"refs": refs}}), CONFIG
    )

    assert _route_spec(svc)["parentRefs"] == parent_refs


def test_edge_62_custom_route_spec_lists_replace_the_preset() -> None:
    user_spec = {
        "parentRefs": [{"name": "my-ingress-gateway", "namespace": "ns"}],
        "rules": [{"backendRefs": [{"kind": "Service", "name": "my-inference-service", "port": 8000}]}],
    }
    svc = apply_router_presets(_svc({"route": {"http": {"spec": user_spec}}, "scheduler": {}}), CONFIG)

    assert _route_spec(svc) == user_spec


def test_user_maps_merge_over_the_preset() -> None:
    svc = apply_router_presets(
        _svc(
            {
                "route": {"http": {"spec": {"hostnames": ["api.example.com"]}}},
                "scheduler": {
                    "pool": {"spec": {"targetPorts": [{"number": 9000}], "selector": {"matchLabels": {}}}}
                },
            }
        ),
        CONFIG,
    )

    spec = _route_spec(svc)
    assert spec["hostnames"] == ["api.example.com"]
    assert [r["name"] for r in spec["rules"]][:2] == ["v1-completions-path", "v1-chat-completions-path"]
    assert spec["parentRefs"] == [INGRESS_PARENT]
    pool_spec = svc.to_wire()["spec"]["router"]["scheduler"]["pool"]["spec"]
    assert pool_spec["targetPorts"] == [{"number": 9000}]
    assert pool_spec["endpointPickerRef"]["name"] == "svc-epp-service"
    assert pool_spec["selector"]["matchLabels"]["kserve.io/component"] == "workload"


def test_an_empty_list_the_user_gives_keeps_the_preset_list() -> None:
    """KServe's patch is built from Go's JSON, which omits empty lists: the preset's lists survive."""
    router: dict[str, Any] = {
        "route": {"http": {"spec": {"rules": []}}},
        "scheduler": {"pool": {"spec": {"targetPorts": []}}},
    }
    svc = apply_router_presets(_svc(router), CONFIG)

    assert len(_route_spec(svc)["rules"]) == 12
    assert svc.to_wire()["spec"]["router"]["scheduler"]["pool"]["spec"]["targetPorts"] == [{"number": 8000}]


def test_fields_the_user_did_not_set_keep_the_preset_value() -> None:
    pool_spec = {"endpointPickerRef": {"port": {"number": 9100}}}
    svc = apply_router_presets(_svc({"scheduler": {"pool": {"spec": pool_spec}}}), CONFIG)

    picker = svc.to_wire()["spec"]["router"]["scheduler"]["pool"]["spec"]["endpointPickerRef"]
    assert picker == {
        "kind": "Service",
        "name": "svc-epp-service",
        "port": {"number": 9100},
        "failureMode": "FailOpen",
    }


def test_scheduler_template_containers_merge_by_name_new_ones_first() -> None:
    template = {"containers": [{"name": "epp", "ports": [{"name": "grpc", "containerPort": 7000}]}]}
    svc = apply_router_presets(_svc({"scheduler": {"template": template}}), CONFIG)

    merged = svc.to_wire()["spec"]["router"]["scheduler"]["template"]
    assert [c["name"] for c in merged["containers"]] == ["epp", "main"]
    assert merged["containers"][0] == template["containers"][0]
    assert merged["serviceAccountName"] == "svc-epp-sa"


def test_scheduler_template_without_containers_keeps_the_preset_containers_and_ports() -> None:
    """Why #2: ``{serviceAccountName: x}`` used to replace the preset's containers (EPP Service ports: [])."""
    svc = apply_router_presets(_svc({"scheduler": {"template": {"serviceAccountName": "x"}}}), CONFIG)

    merged = svc.to_wire()["spec"]["router"]["scheduler"]["template"]
    assert merged["serviceAccountName"] == "x"
    assert [p["name"] for p in merged["containers"][0]["ports"]] == ["grpc", "grpc-health", "metrics", "zmq"]


WORKLOAD_SELECTOR = {
    "app.kubernetes.io/name": "svc",
    "app.kubernetes.io/part-of": "llminferenceservice",
    "kserve.io/component": "workload",
}


def test_user_service_account_kept_and_selector_labels_merged() -> None:
    scheduler = {
        "template": {"serviceAccountName": "my-sa"},
        "pool": {"spec": {"selector": {"matchLabels": {"app": "mine", "kserve.io/component": "custom"}}}},
    }
    svc = apply_router_presets(_svc({"scheduler": scheduler}), CONFIG)

    wire = svc.to_wire()["spec"]["router"]["scheduler"]
    assert wire["template"]["serviceAccountName"] == "my-sa"
    assert [c["name"] for c in wire["template"]["containers"]] == ["main"]
    assert wire["pool"]["spec"]["selector"] == {
        "matchLabels": {**WORKLOAD_SELECTOR, "app": "mine", "kserve.io/component": "custom"}
    }


@pytest.mark.parametrize(
    "pool_spec",
    [{"targetPorts": [{"number": 8000}]}, {"selector": {"matchLabels": {}}}],
    ids=["no-selector", "empty-match-labels"],
)
def test_1_1_empty_pool_selector_selects_the_workload(pool_spec: dict[str, Any]) -> None:
    # With a pool ref no preset is merged, so only the adjustment can fill the selector.
    scheduler = {"pool": {"ref": {"name": "external"}, "spec": pool_spec}, "template": {}}
    svc = apply_router_presets(_svc({"scheduler": scheduler}), CONFIG)

    wire = svc.to_wire()["spec"]["router"]["scheduler"]
    assert wire["pool"]["spec"]["selector"] == {"matchLabels": WORKLOAD_SELECTOR}
    assert wire["template"] == {"serviceAccountName": "svc-epp-sa"}


def test_p10_model_header_uses_model_name_and_configured_header() -> None:
    config = RouterConfig(
        model_based_routing_header_name="X-Model",
        ingress_gateway_namespace="gw-ns",
        ingress_gateway_name="gw",
    )
    svc = apply_router_presets(_svc({"route": {}}, model={"name": "facebook/opt-125m"}), config)

    spec = _route_spec(svc)
    assert spec["parentRefs"] == [{**INGRESS_PARENT, "name": "gw", "namespace": "gw-ns"}]
    assert spec["rules"][-1]["matches"] == [
        {"headers": [{"type": "Exact", "name": "X-Model", "value": "publishers/ns/models/facebook/opt-125m"}]}
    ]


def test_p10_long_name_uses_child_names() -> None:
    name = "facebook-opt-125m-single-simulated-with-a-very-long-name-x"
    svc = apply_router_presets(_svc({"route": {}, "scheduler": {}}, name=name), CONFIG)

    backends = [b["name"] for r in _route_spec(svc)["rules"] for b in r["backendRefs"]]
    assert set(backends) == {
        "facebook-opt-125f72b7401af87bbe17e98c81391d543ec-inference-pool",
        "facebook-opf72b7401af87bbe17e98c81391d543ec-kserve-workload-svc",
    }
    assert svc.epp_service_name() == "facebook-opt-125m-sf72b7401af87bbe17e98c81391d543ec-epp-service"


@pytest.mark.parametrize(
    "router",
    [
        None,
        {"gateway": {"refs": [{"name": "gw"}]}},
        {"route": {"http": {"refs": [{"name": "my-custom-route"}]}}, "gateway": {"refs": [{"name": "gw"}]}},
        {"scheduler": {"pool": {"ref": {"name": "external"}}}},
    ],
    ids=["no-router", "gateway-only", "edge-63-route-refs-get-no-spec", "pool-ref-gets-no-scheduler-preset"],
)
def test_router_presets_apply_only_where_asked(router: dict[str, Any] | None) -> None:
    svc = _svc(router)

    merged = apply_router_presets(svc, CONFIG).to_wire()["spec"]
    assert merged.get("router") == svc.to_wire()["spec"].get("router")
    # The workload preset applies to every single-node spec and turns model-based routing on.
    assert merged["annotations"] == {"serving.kserve.io/model-based-routing-enabled": "true"}


def test_presets_are_idempotent_and_pure() -> None:
    svc = _svc({"route": {}, "gateway": {"refs": [{"name": "gw"}]}})
    before = svc.to_wire()

    once = apply_router_presets(svc, CONFIG)
    twice = apply_router_presets(once, CONFIG)

    assert twice.to_wire() == once.to_wire()
    assert svc.to_wire() == before


def test_edge_56_route_is_stable_against_its_live_copy() -> None:
    """The live copy the server stores (defaults added) never asks for another update (R-CRUD-3/4)."""
    svc = apply_router_presets(_svc({"route": {}, "gateway": {}, "scheduler": {}}), CONFIG)
    expected = derivative.http_route_with_defaults(
        expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)
    ).to_wire()

    assert derivative.semantically_equal(expected, expected)
    assert expected["spec"]["rules"][-1]["matches"][0]["path"] == {"type": "PathPrefix", "value": "/"}
