"""Classification, addresses, status.url and observed gateways (spec 3.7.5-3.7.8; edge cases 33-41, 84)."""

from __future__ import annotations

import pytest

from llmisvc_core.models.gateway_api import HTTPRoute, Listener
from llmisvc_core.models.kube import ObjectMeta
from llmisvc_core.models.llmisvc import (
    LLMInferenceService,
    LLMInferenceServiceSpec,
    LoRAAdapter,
    LoRASpec,
    ModelSpec,
    ObjectReference,
    ObservedGateway,
)
from llmisvc_core.urls.addressing import (
    build_observed_gateways,
    external_urls,
    internal_urls,
    is_cluster_local,
    is_internal,
    is_model_routing_url,
    prefer_path_based_url,
    sourced_address,
)
from llmisvc_core.urls.discovery import DiscoveredURL
from llmisvc_core.world.config import RouterConfig
from tests.builders import typed as d
from tests.builders.typed import gateway, https, listener, match, parent, route, rule, service

CLUSTER = "cluster.local"
ORIGIN = ObjectReference(group="gateway.networking.k8s.io", kind="Gateway", name="gw", namespace="gw-ns")


def _discovered(*urls: str) -> list[DiscoveredURL]:
    return [DiscoveredURL(url=url, origin=ORIGIN) for url in urls]


# --- R-CLS-2 / Appendix D ---------------------------------------------------------------------------

INTERNAL = [
    "http://192.168.1.10/",
    "http://10.0.0.20/",
    "http://localhost/",
    "http://192.168.1.10:8080/",
    "http://localhost:3000/",
    "http://service.local/",
    "http://app.localhost/",
    "http://backend.internal/",
    "http://localhost:8080/health",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://[fd00::1]/",
    "http://[fc00::1]:8080/",
    "http://[::ffff:10.1.2.3]/",
    "http://SERVICE.LOCAL/",
    "http://svc.ns.svc.cluster.local/",
    "http://my-cluster.local/",
]
EXTERNAL = [
    "http://api.example.com/",
    "https://secure.example.com/",
    "http://203.0.113.1/",
    "http://api.example.com:8080/",
    "https://secure.example.com:8443/",
    "http://127.0.0.1/",
    "http://169.254.1.1/",
    "http://100.64.0.1/",
    "http://172.32.0.1/",
    "http://[fe80::1]/",
    "http://[::1]/",
    "http://[2001:db8::1]/",
    "http://010.0.0.1/",
    "http://[fd00::1%25eth0]/",
    "http://localhost.example.com/",
]


@pytest.mark.parametrize("url", INTERNAL, ids=INTERNAL)
def test_r_cls_2_internal_urls(url: str) -> None:
    """Edge case 33 plus Go's private ranges (Appendix D) and hostname suffixes."""
    assert is_internal(url, CLUSTER) is True


@pytest.mark.parametrize("url", EXTERNAL, ids=EXTERNAL)
def test_r_cls_2_external_urls_include_loopback_link_local_and_cgnat(url: str) -> None:
    """Edge case 33 and quirk Q19; leading zeros and zoned literals are not IPs for Go."""
    assert is_internal(url, CLUSTER) is False


def test_r_cls_2_cluster_domain_is_a_plain_suffix() -> None:
    assert is_internal("http://svc.ns.svc.corp.example/", "corp.example") is True
    assert is_internal("http://mycorp.example/", "corp.example") is True
    assert is_internal("http://svc.ns.svc.corp.example/", CLUSTER) is False


def test_r_cls_3_filters_keep_input_order() -> None:
    """Edge case 33: filtering preserves order; empty input gives empty outputs."""
    urls = _discovered(
        "http://api.example.com/", "http://10.0.0.1/", "http://203.0.113.1/", "http://localhost/"
    )
    assert [u.url for u in external_urls(urls, CLUSTER)] == ["http://api.example.com/", "http://203.0.113.1/"]
    assert [u.url for u in internal_urls(urls, CLUSTER)] == ["http://10.0.0.1/", "http://localhost/"]
    assert external_urls([], CLUSTER) == []
    assert internal_urls([], CLUSTER) == []


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://my-service.default.svc.cluster.local/", True),
        ("http://GATEWAY.NS.SVC.CLUSTER.LOCAL:8080/x", True),
        ("http://service.local/", False),
        ("http://10.0.0.1/", False),
    ],
    ids=["cluster_host", "case_insensitive_with_port", "other_local_suffix", "private_ip"],
)
def test_r_cls_4_cluster_local(url: str, expected: bool) -> None:
    assert is_cluster_local(url, CLUSTER) is expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h/", True),
        ("http://h", True),
        ("http://h:8080/", True),
        ("http://h/ns/name", False),
        ("http://h//", False),
    ],
    ids=["root", "empty_path", "root_with_port", "path", "double_slash"],
)
def test_r_cls_5_model_routing_url(url: str, expected: bool) -> None:
    assert is_model_routing_url(url) is expected


# --- R-ADDR-* ------------------------------------------------------------------------------------------


def _svc(
    model: str | None = "facebook/opt-125m", adapters: list[str | None] | None = None
) -> LLMInferenceService:
    lora = LoRASpec(adapters=[LoRAAdapter(name=a) for a in adapters]) if adapters is not None else None
    return LLMInferenceService(
        metadata=ObjectMeta(name="test-svc", namespace="test-ns"),
        spec=LLMInferenceServiceSpec(model=ModelSpec(name=model, lora=lora)),
    )


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://api.example.com/ns/name", "gateway-external"),
        ("http://203.0.113.1/ns/name", "gateway-external"),
        ("http://192.168.1.100/ns/name", "internal"),
        ("http://localhost/ns/name", "internal"),
        ("http://my-service.default.svc.cluster.local/ns/name", "gateway-internal"),
        ("http://gateway.ns.svc.cluster.local:8080/ns/name", "gateway-internal"),
        ("https://api.example.com/", "gateway-external-model-routing"),
        ("http://my-service.default.svc.cluster.local/", "gateway-internal-model-routing"),
        ("http://localhost/", "internal-model-routing"),
    ],
    ids=lambda value: value.replace("/", "_") if isinstance(value, str) else None,
)
def test_r_addr_1_address_type_name(url: str, name: str) -> None:
    """Edge case 34."""
    assert sourced_address(_discovered(url)[0], _svc(), CLUSTER).name == name


def test_r_addr_2_url_and_origin_copied() -> None:
    discovered = _discovered("http://203.0.113.1/test-ns/test-svc")[0]
    address = sourced_address(discovered, _svc(), CLUSTER)
    assert address.url == "http://203.0.113.1/test-ns/test-svc"
    assert address.origin == ORIGIN
    assert address.origin is not discovered.origin
    assert address.to_wire() == {
        "name": "gateway-external",
        "url": "http://203.0.113.1/test-ns/test-svc",
        "origin": {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "gw",
            "namespace": "gw-ns",
        },
        "models": [{"name": "publishers/test-ns/models/facebook/opt-125m"}, {"name": "facebook/opt-125m"}],
    }


def _pub(name: str) -> str:
    return f"publishers/test-ns/models/{name}"


BASE = "facebook/opt-125m"
MODEL_CASES = [
    pytest.param("/test-ns/test-svc", BASE, None, [_pub(BASE), BASE], id="edge_35_path_url"),
    pytest.param("/", BASE, None, [_pub(BASE)], id="edge_35_model_routing_url"),
    pytest.param(
        "/test-ns/test-svc",
        BASE,
        ["adapter-a", "adapter-b"],
        [_pub(BASE), BASE, _pub("adapter-a"), "adapter-a", _pub("adapter-b"), "adapter-b"],
        id="edge_35_path_url_with_adapters_interleaved",
    ),
    pytest.param(
        "/",
        BASE,
        ["adapter-a", "adapter-b"],
        [_pub(BASE), _pub("adapter-a"), _pub("adapter-b")],
        id="edge_35_model_routing_url_with_adapters",
    ),
    pytest.param("/test-ns/test-svc", BASE, [], [_pub(BASE), BASE], id="edge_35_lora_without_adapters"),
    pytest.param("/", None, None, [_pub("test-svc")], id="model_name_defaults_to_object_name"),
    pytest.param("/", BASE, [None, "a"], [_pub(BASE), _pub("a")], id="adapter_without_name_skipped"),
]


@pytest.mark.parametrize(("path", "model", "adapters", "expected"), MODEL_CASES)
def test_r_addr_3_models(
    path: str, model: str | None, adapters: list[str | None] | None, expected: list[str]
) -> None:
    discovered = _discovered(f"http://api.example.com{path}")[0]
    address = sourced_address(discovered, _svc(model, adapters), CLUSTER)
    assert [m.name for m in address.models or []] == expected


def test_r_addr_3_does_not_write_the_default_model_name_back() -> None:
    svc = _svc(model=None)
    sourced_address(_discovered("http://h/")[0], svc, CLUSTER)
    assert svc.spec.model is not None
    assert svc.spec.model.name is None


# --- R-URL-1 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("urls", "scheme", "expected"),
    [
        (["http://h/", "http://h/ns/name", "https://h/ns/name"], "", "http://h/ns/name"),
        (["http://h/", "http://h/ns/name", "https://h/ns/name"], "https", "https://h/ns/name"),
        (["https://h/ns/name/v1", "http://h/ns/name"], "http", "http://h/ns/name"),
        (["http://h/", "https://h/ns/name"], "http", "https://h/ns/name"),
        (["http://b/", "http://a/other"], "", "http://b/"),
        (["http://h/", "http://h/ns/name-2/x"], "", "http://h/ns/name-2/x"),
        (["http://h/ns", "http://h/x/ns/name"], "", "http://h/ns"),
    ],
    ids=[
        "first_path_match",
        "preferred_scheme_among_path_matches",
        "preferred_scheme_later_in_list",
        "preferred_scheme_missing_first_path_match",
        "no_path_match_first_url",
        "q20_plain_string_prefix",
        "prefix_must_start_the_path",
    ],
)
def test_r_url_1_prefer_path_based_url(urls: list[str], scheme: str, expected: str) -> None:
    assert prefer_path_based_url(_discovered(*urls), "ns", "name", scheme) == expected


def _status_url(discovered: list[DiscoveredURL], url_scheme: str) -> tuple[str | None, int]:
    """R-ST-7/R-ST-8 as the status updater composes them: sort, prefer external, else internal."""
    ordered = sorted(discovered, key=lambda item: item.url)
    external = external_urls(ordered, CLUSTER)
    if external:
        return prefer_path_based_url(external, "test-ns", "test-svc", ""), len(ordered)
    if ordered:
        return prefer_path_based_url(ordered, "test-ns", "test-svc", url_scheme), len(ordered)
    return None, 0


SVC_HOST = "my-gateway-svc.gw-ns.svc.cluster.local"
STATUS_URL_CASES = [
    pytest.param(
        [listener("http"), https("https")],
        [],
        "https",
        f"https://{SVC_HOST}/test-ns/test-svc",
        2,
        id="edge_36",
    ),
    pytest.param(
        [listener("http"), https("https")], [], "http", f"http://{SVC_HOST}/test-ns/test-svc", 2, id="edge_37"
    ),
    pytest.param(
        [listener("http"), https("https")],
        ["203.0.113.1"],
        "https",
        "http://203.0.113.1/test-ns/test-svc",
        4,
        id="edge_38_external_wins_without_scheme_preference",
    ),
    pytest.param(
        [https("https")], [], "https", f"https://{SVC_HOST}/test-ns/test-svc", 1, id="edge_39_https_only"
    ),
]


@pytest.mark.parametrize(("listeners", "addresses", "url_scheme", "expected", "count"), STATUS_URL_CASES)
def test_r_url_2_status_url_selection(
    listeners: list[Listener], addresses: list[str], url_scheme: str, expected: str, count: int
) -> None:
    gw = gateway("my-gateway", "gw-ns", listeners=listeners, addresses=addresses)
    backing = service("my-gateway-svc", "gw-ns", ports=[80, 443])
    http_route = route(
        "route", "test-ns", parents=[parent("my-gateway", "gw-ns")], rules=[rule(match("/test-ns/test-svc"))]
    )
    discovered = d.discover(http_route, [gw], [backing], url_scheme=url_scheme)
    assert _status_url(discovered, url_scheme) == (expected, count)


def test_r_url_2_edge_39_http_only_gateway_falls_back_to_first_path_match() -> None:
    gw = gateway("http-only-gw", "infra-ns", listeners=[listener("http")])
    http_route = route(parents=[parent("http-only-gw", "infra-ns")], rules=[rule(match("/test-ns/test-svc"))])
    discovered = d.discover(http_route, [gw], [service("my-gateway-svc", "infra-ns")], url_scheme="https")
    assert _status_url(discovered, "https") == (
        "http://my-gateway-svc.infra-ns.svc.cluster.local/test-ns/test-svc",
        1,
    )


def test_r_url_2_default_config_scheme_is_http() -> None:
    assert RouterConfig().url_scheme == "http"


# --- R-OBS-* ---------------------------------------------------------------------------------------------


def _observed(
    name: str, namespace: str, listeners: list[str] | None, routes: list[str], route_ns: str = "ns-a"
) -> ObservedGateway:
    return ObservedGateway(
        group="gateway.networking.k8s.io",
        kind="Gateway",
        name=name,
        namespace=namespace,
        listeners=listeners,
        http_routes=[
            ObjectReference(group="gateway.networking.k8s.io", kind="HTTPRoute", name=r, namespace=route_ns)
            for r in routes
        ],
    )


def _route(name: str, *parents: tuple[str, str | None, str | None], namespace: str = "ns-a") -> HTTPRoute:
    return route(name, namespace, parents=[parent(gw, ns, section) for gw, ns, section in parents])


OBSERVED_CASES = [
    pytest.param(
        [_route("my-route", ("gw-1", "ns-a", "http"))],
        [_observed("gw-1", "ns-a", ["http"], ["my-route"])],
        id="edge_41_one_route_with_section",
    ),
    pytest.param(
        [_route("my-route", ("gw-1", "ns-a", None))],
        [_observed("gw-1", "ns-a", None, ["my-route"])],
        id="edge_41_no_section_listeners_null",
    ),
    pytest.param(
        [_route("route-b", ("gw-1", "ns-a", "http")), _route("route-a", ("gw-1", "ns-a", "http"))],
        [_observed("gw-1", "ns-a", ["http"], ["route-a", "route-b"])],
        id="edge_41_two_routes_one_gateway_sorted_by_name",
    ),
    pytest.param(
        [_route("my-route", ("gw-1", "ns-a", "https"), ("gw-1", "ns-a", "http"))],
        [_observed("gw-1", "ns-a", ["http", "https"], ["my-route"])],
        id="edge_41_sections_sorted_route_listed_once",
    ),
    pytest.param(
        [_route("my-route", ("gw-1", "ns-a", None), ("gw-2", "ns-a", None))],
        [_observed("gw-1", "ns-a", None, ["my-route"]), _observed("gw-2", "ns-a", None, ["my-route"])],
        id="edge_41_route_on_two_gateways",
    ),
    pytest.param(
        [
            _route(
                "my-route", ("gw-beta", "ns-b", None), ("gw-alpha", "ns-a", None), ("gw-alpha", "ns-b", None)
            )
        ],
        [
            _observed("gw-alpha", "ns-a", None, ["my-route"]),
            _observed("gw-alpha", "ns-b", None, ["my-route"]),
            _observed("gw-beta", "ns-b", None, ["my-route"]),
        ],
        id="edge_41_ordered_by_namespace_slash_name",
    ),
    pytest.param(
        [_route("my-route", ("gw-1", None, "http"), ("gw-1", None, "http"))],
        [_observed("gw-1", "ns-a", ["http"], ["my-route"])],
        id="r_obs_2_namespace_defaults_to_route_duplicate_sections_collapse",
    ),
    pytest.param(
        [_route("my-route", ("gw-1", "ns-a", None), ("gw-1", "ns-a", "https"))],
        [_observed("gw-1", "ns-a", ["https"], ["my-route"])],
        id="q22_mixed_sectioned_and_unsectioned_lists_only_sections",
    ),
    pytest.param(
        [_route("r", ("gw-1", "ns-a", None)), _route("r", ("gw-1", "ns-a", None), namespace="ns-b")],
        [_observed("gw-1", "ns-a", None, ["r"])],
        id="q21_routes_deduplicated_by_name_only",
    ),
    pytest.param(
        [_route("route-a", ("gw", "ns-a", None)), _route("route-b", ("gw", "ns-a", None))],
        [_observed("gw", "ns-a", None, ["route-a", "route-b"])],
        id="edge_84_gateway_listed_once_with_both_routes",
    ),
    pytest.param([_route("no-parents")], [], id="r_obs_4_routes_without_parent_refs_give_empty_list"),
]


@pytest.mark.parametrize(("routes", "expected"), OBSERVED_CASES)
def test_r_obs_build_observed_gateways(routes: list[HTTPRoute], expected: list[ObservedGateway]) -> None:
    assert build_observed_gateways(routes) == expected


def test_r_obs_1_no_routes_gives_null() -> None:
    """Edge case 41."""
    assert build_observed_gateways([]) is None


def test_r_obs_3_wire_shape() -> None:
    observed = build_observed_gateways([_route("my-route", ("gw-1", "ns-a", "http"))])
    assert [o.to_wire() for o in observed or []] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "gw-1",
            "namespace": "ns-a",
            "listeners": ["http"],
            "httpRoutes": [
                {
                    "group": "gateway.networking.k8s.io",
                    "kind": "HTTPRoute",
                    "name": "my-route",
                    "namespace": "ns-a",
                }
            ],
        }
    ]
