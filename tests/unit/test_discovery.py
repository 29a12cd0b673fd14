"""URL discovery (spec 3.7.3, R-SVC-3, R-ST-10, 3.8.1 gatewayKeys) and edge cases 1-32, 40 and 84."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.httproute.model_routing import is_model_routing_match
from llmisvc_core.models.core_objects import Service
from llmisvc_core.models.gateway_api import (
    Gateway,
    GatewayClass,
    HTTPRoute,
    HTTPRouteRule,
    Listener,
    ParentReference,
)
from llmisvc_core.models.llmisvc import ObjectReference
from llmisvc_core.urls.discovery import (
    DiscoveryError,
    NoURLsDiscoveredError,
    ResolvedGateway,
    combine_into_urls,
    dedupe_resolved,
    extract_route_paths,
    hostnames_for_listener,
    listener_scheme,
    resolved_gateway_keys,
    select_listeners,
)
from llmisvc_core.world.config import Environment
from tests.builders import typed as d
from tests.builders.typed import (
    HEADER,
    POOL,
    gateway,
    https,
    listener,
    match,
    parent,
    route,
    rule,
    service,
)

IP = "203.0.113.1"


# --- R-DISC-2: listeners --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "scheme"),
    [
        ("HTTP", "http"),
        ("HTTPS", "https"),
        ("TLS", "https"),
        ("TCP", ""),
        ("UDP", ""),
        ("http", ""),
        ("", ""),
    ],
    ids=["http", "https", "tls_is_https", "tcp", "udp", "lowercase_is_not_http", "empty"],
)
def test_r_disc_2_listener_scheme_by_protocol(protocol: str, scheme: str) -> None:
    assert listener_scheme(protocol) == scheme


MIXED = [
    listener("tcp", "TCP", 9000),
    listener("plain", "HTTP", 80),
    listener("secure", "HTTPS", 443),
    listener("tls", "TLS", 8443),
    listener("alt", "HTTP", 8080),
]


@pytest.mark.parametrize(
    ("url_scheme", "order"),
    [
        ("", ["secure", "tls", "plain", "alt"]),
        ("https", ["secure", "tls", "plain", "alt"]),
        ("http", ["plain", "alt", "secure", "tls"]),
    ],
    ids=["no_preference_https_first", "prefer_https", "prefer_http"],
)
def test_r_disc_2_http_capable_listeners_sorted_stably_by_precedence(
    url_scheme: str, order: list[str]
) -> None:
    selected = select_listeners(gateway(listeners=MIXED), parent(), url_scheme)
    assert [item.name for item in selected] == order


def test_r_disc_2_section_name_selects_that_listener_whatever_its_protocol() -> None:
    selected = select_listeners(gateway(listeners=MIXED), parent(section="tcp"), "http")
    assert [item.name for item in selected] == ["tcp"]


@pytest.mark.parametrize(
    ("listeners", "section", "message"),
    [
        (MIXED, "missing", 'listener "missing" not found in gateway test-ns/gw'),
        ([listener("tcp", "TCP", 9000)], None, "no HTTP-capable listener found in gateway test-ns/gw"),
        ([], None, "no HTTP-capable listener found in gateway test-ns/gw"),
    ],
    ids=["unknown_section", "only_tcp", "no_listeners"],
)
def test_r_disc_2_selection_errors(listeners: list[Listener], section: str | None, message: str) -> None:
    with pytest.raises(DiscoveryError) as err:
        select_listeners(gateway(listeners=listeners), parent(section=section), "")
    assert str(err.value) == message


# --- R-DISC-7: hostnames --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hostnames", "listener_hostname", "label", "expected"),
    [
        (["api.example.com"], "*.example.com", "inference", ["api.example.com"]),
        (["", "*", "a.example.com"], None, "inference", ["a.example.com"]),
        (["*.example.com"], None, "inference", ["*.example.com"]),
        (["*"], "listener.example.com", "inference", ["listener.example.com"]),
        (None, "*.example.com", "inference", ["inference.example.com"]),
        (None, "*.example.com", "models", ["models.example.com"]),
        (None, "*.example.com", "", [".example.com"]),
        (None, "", "inference", ["203.0.113.100", "lb.example.com"]),
        (["*"], None, "inference", ["203.0.113.100", "lb.example.com"]),
    ],
    ids=[
        "route_hostnames_beat_listener_wildcard",
        "empty_and_bare_star_dropped",
        "q10_route_wildcard_kept_verbatim",
        "bare_star_falls_back_to_listener_hostname",
        "listener_wildcard_uses_label",
        "listener_wildcard_custom_label",
        "q14_empty_label",
        "empty_listener_hostname_uses_addresses_skipping_empty_values",
        "star_only_uses_addresses",
    ],
)
def test_r_disc_7_hostnames_for_listener(
    hostnames: list[str] | None, listener_hostname: str | None, label: str, expected: list[str]
) -> None:
    gw = gateway(addresses=["203.0.113.100", "", ("Hostname", "lb.example.com")])
    result = hostnames_for_listener(
        route(hostnames=hostnames), listener(hostname=listener_hostname), gw, label
    )
    assert result == expected


# --- R-DISC-8: combining ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hostnames", "scheme", "port", "path", "expected"),
    [
        (
            ["b.example.com", "a.example.com"],
            "http",
            80,
            "/",
            ["http://a.example.com/", "http://b.example.com/"],
        ),
        (["h"], "http", 8080, "/x", ["http://h:8080/x"]),
        (["h"], "https", 443, "/", ["https://h/"]),
        (["h"], "https", 80, "/", ["https://h:80/"]),
        (["h"], "http", 443, "/", ["http://h:443/"]),
        (["h"], "http", 0, "/", ["http://h/"]),
        (["2001:db8::1"], "http", 80, "/", ["http://[2001:db8::1]/"]),
        (["2001:db8::1"], "https", 8443, "/", ["https://[2001:db8::1]:8443/"]),
        (["h"], "http", 80, "/a b", ["http://h/a%20b"]),
        ([], "http", 80, "/", []),
    ],
    ids=[
        "hostnames_sorted",
        "non_default_http_port_shown",
        "default_https_port_hidden",
        "port_80_shown_for_https",
        "port_443_shown_for_http",
        "port_zero_hidden",
        "ipv6_bracketed_without_port",
        "ipv6_bracketed_with_port",
        "path_rendered_as_go_escapes_it",
        "no_hostnames",
    ],
)
def test_r_disc_8_combine_into_urls(
    hostnames: list[str], scheme: str, port: int, path: str, expected: list[str]
) -> None:
    assert combine_into_urls(hostnames, scheme, port, path) == expected


@pytest.mark.parametrize(
    ("host", "scheme", "port", "message"),
    [
        ("host", "", 9000, 'failed to parse URL ://host/: parse "://host/": missing protocol scheme'),
        (
            "bad host",
            "http",
            80,
            'failed to parse URL http://bad host/: parse "http://bad host/": '
            'invalid character " " in host name',
        ),
    ],
    ids=["empty_scheme_never_shows_port_and_fails", "space_in_host"],
)
def test_r_disc_8_parse_failures_use_go_texts(host: str, scheme: str, port: int, message: str) -> None:
    with pytest.raises(DiscoveryError) as err:
        combine_into_urls([host], scheme, port, "/")
    assert str(err.value) == message


# --- R-EXP-8 and R-DISC-11: paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "header_name", "expected"),
    [
        ([HEADER], HEADER, True),
        (["x-other", HEADER], HEADER, True),
        ([HEADER.lower()], HEADER, False),
        ([HEADER], "", False),
        ([], HEADER, False),
    ],
    ids=["exact_name", "any_header_of_the_match", "q28_case_sensitive", "empty_header_config", "no_headers"],
)
def test_r_exp_8_model_routing_match(headers: list[str], header_name: str, expected: bool) -> None:
    assert is_model_routing_match(match("/x", headers=headers), header_name) is expected


PATH_CASES = [
    pytest.param([], "", ["/"], id="no_rules_gives_root"),
    pytest.param([rule()], "", ["/"], id="rule_without_matches_gives_root"),
    pytest.param([rule(match("/api/v1"))], "", ["/api/v1"], id="edge_08_path_value_type_unset"),
    pytest.param([rule(match(None))], "", ["/"], id="match_without_path_is_root"),
    pytest.param(
        [
            rule(match("/ns/name/v1/completions", type_="PathPrefix"), kind=POOL),
            rule(match("/ns/name/v1/chat/completions", type_="PathPrefix"), kind=POOL),
            rule(match("/ns/name/v1/messages", type_="PathPrefix"), kind=POOL),
            rule(match("/ns/name", type_="PathPrefix")),
        ],
        "",
        ["/ns/name"],
        id="edge_09_service_rule_preferred",
    ),
    pytest.param(
        [
            rule(match("/ns/name/v1/completions"), kind=POOL),
            rule(match("/ns/name/v1/chat/completions"), kind=POOL),
            rule(match("/ns/name/v1/messages"), kind=POOL),
        ],
        "",
        ["/ns/name/v1/messages"],
        id="edge_10_fewest_slashes_then_shortest",
    ),
    pytest.param(
        [rule(match("/ns/name/v1/completions"), kind=POOL), rule(match("/ns/name"), kind=None)],
        "",
        ["/ns/name"],
        id="edge_11_unset_backend_kind_is_service",
    ),
    pytest.param(
        [rule(match("/ns/name"), kind=""), rule(match("/ns/name/v1/x"), kind=POOL)],
        "",
        ["/ns/name"],
        id="explicit_empty_kind_is_not_service_shortest_other_path_wins",
    ),
    pytest.param(
        [rule(match(None, headers=["x-custom"])), rule(match("/ns/name"))],
        "",
        ["/ns/name"],
        id="edge_12_user_header_rule_ignored",
    ),
    pytest.param(
        [
            rule(match("/ns/name/v1/completions"), kind=POOL),
            rule(match("/v1/completions", type_="Exact", headers=[HEADER]), kind=POOL),
            rule(match("/ns/name")),
            rule(match("/", type_="PathPrefix", headers=[HEADER])),
        ],
        HEADER,
        ["/", "/ns/name"],
        id="edge_13_path_based_and_model_routing",
    ),
    pytest.param(
        [rule(match("/ns/name")), rule(match("/custom", type_="Exact", headers=["X-Custom-Header"]))],
        HEADER,
        ["/ns/name"],
        id="edge_14_user_header_rules_never_advertised",
    ),
    pytest.param(
        [rule(match("/ns/name")), rule(match(None, headers=[HEADER]))],
        "",
        ["/ns/name"],
        id="edge_14_model_header_ignored_without_header_config",
    ),
    pytest.param(
        [rule(match("/v1/completions", headers=[HEADER]), kind=POOL), rule(match("/ns/name"))],
        HEADER,
        ["/ns/name", "/v1/completions"],
        id="pool_model_routing_path_used_when_no_service_one_ties_keep_order",
    ),
    pytest.param(
        [rule(match("/")), rule(match("/", headers=[HEADER]))],
        HEADER,
        ["/"],
        id="equal_winners_compacted",
    ),
    pytest.param(
        [rule(match(""), match("/ns/name"))],
        "",
        ["/"],
        id="empty_path_value_wins_and_contributes_nothing",
    ),
    pytest.param(
        [
            rule(match("/ns/name/v1/completions", type_="PathPrefix"), kind=POOL),
            rule(match("/publishers/ns/models/m/v1/completions", type_="PathPrefix"), kind=POOL),
            rule(match("/publishers/ns/models/m", type_="PathPrefix")),
            rule(match("/ns/name", type_="PathPrefix")),
        ],
        "",
        ["/ns/name", "/publishers/ns/models/m"],
        id="publisher_paths_5822_are_their_own_bucket",
    ),
    pytest.param(
        [
            rule(match("/publishers/ns/models/m", type_="PathPrefix")),
            rule(match("/v1/completions", type_="Exact", headers=[HEADER]), kind=POOL),
            rule(match("/", type_="PathPrefix", headers=[HEADER])),
            rule(match("/ns/name", type_="PathPrefix")),
        ],
        HEADER,
        ["/", "/ns/name", "/publishers/ns/models/m"],
        id="publisher_paths_5822_three_buckets_sorted_by_depth",
    ),
    pytest.param(
        [rule(match("/publishers/ns/models/m/v1/x"), kind=POOL), rule(match("/publishers/ns/models/m"))],
        "",
        ["/publishers/ns/models/m"],
        id="publisher_paths_5822_alone_service_backed_preferred",
    ),
    pytest.param(
        [rule(match("/publishers/ns/models/m", headers=[HEADER])), rule(match("/ns/name"))],
        HEADER,
        ["/ns/name", "/publishers/ns/models/m"],
        id="publisher_paths_5822_a_header_match_is_model_routing_whatever_its_path",
    ),
    pytest.param(
        [rule(match("/publishers")), rule(match("/ns/name/x"))],
        "",
        ["/publishers"],
        id="publisher_paths_5822_need_the_trailing_slash",
    ),
    pytest.param(
        [rule(match("/éé"), match("/abc"), match("/xyz"))],
        "",
        ["/abc"],
        id="length_is_counted_in_bytes_first_minimum_wins",
    ),
]


@pytest.mark.parametrize(("rules", "header_name", "expected"), PATH_CASES)
def test_r_disc_11_extract_route_paths(
    rules: list[HTTPRouteRule], header_name: str, expected: list[str]
) -> None:
    """R-DISC-11 as KServe's ``extractRoutePaths`` has it at aaac4e294 (router_discovery.go): one base
    path per access method; the ``publisher_paths_5822`` cases pin the third bucket of #5822 (commit
    bacf590e3), header-less paths under ``/publishers/``."""
    assert extract_route_paths(route(rules=rules), header_name) == expected


# --- R-DISC-2..10: discovery, edge cases 1-32 --------------------------------------------------------

ADDRESS_CASES = [
    pytest.param(route(), [gateway(addresses=[IP])], ["http://203.0.113.1/"], id="edge_01_address"),
    pytest.param(
        route(),
        [gateway(addresses=["203.0.113.200", "203.0.113.100"])],
        ["http://203.0.113.100/", "http://203.0.113.200/"],
        id="edge_02_addresses_sorted",
    ),
    pytest.param(
        route(hostnames=["api.example.com"]),
        [gateway(listeners=[listener(hostname="*.example.com")], addresses=[IP])],
        ["http://api.example.com/"],
        id="edge_03_route_hostnames_beat_listener_wildcard",
    ),
    pytest.param(
        route(hostnames=["*"]),
        [gateway(addresses=["203.0.113.100"])],
        ["http://203.0.113.100/"],
        id="edge_04_bare_star_uses_address",
    ),
    pytest.param(
        route(hostnames=["*"]),
        [gateway(listeners=[listener(hostname="listener.example.com")], addresses=["203.0.113.100"])],
        ["http://listener.example.com/"],
        id="edge_04_bare_star_uses_listener_hostname",
    ),
    pytest.param(
        route(hostnames=["api.example.com", "alt.example.com"]),
        [gateway(addresses=[IP])],
        ["http://alt.example.com/", "http://api.example.com/"],
        id="edge_05_route_hostnames_sorted",
    ),
    pytest.param(
        route(hostnames=["api.example.com", "v2.example.com"]),
        [gateway(addresses=["203.0.113.1", "203.0.113.2"])],
        ["http://api.example.com/", "http://v2.example.com/"],
        id="edge_05_addresses_unused_with_route_hostnames",
    ),
    pytest.param(
        route(hostnames=["route.example.com"]),
        [gateway(listeners=[listener(hostname="listener.example.com")], addresses=[IP])],
        ["http://route.example.com/"],
        id="edge_06_route_hostname_beats_listener_hostname",
    ),
    pytest.param(
        route(), [gateway(addresses=[IP])], ["http://203.0.113.1/"], id="edge_06_no_hostname_uses_address"
    ),
    pytest.param(
        route(),
        [gateway(listeners=[listener(hostname="*.example.com")], addresses=[IP])],
        ["http://inference.example.com/"],
        id="edge_07_wildcard_listener",
    ),
    pytest.param(
        route(),
        [gateway(listeners=[listener(hostname="*.api.example.com")], addresses=[IP])],
        ["http://inference.api.example.com/"],
        id="edge_07_nested_wildcard_listener",
    ),
    pytest.param(
        route(),
        [gateway(listeners=[https(hostname="*.secure.example.com")], addresses=[IP])],
        ["https://inference.secure.example.com/"],
        id="edge_07_wildcard_https_listener",
    ),
    pytest.param(
        route(),
        [gateway(listeners=[listener(port=8080, hostname="*.example.com")], addresses=[IP])],
        ["http://inference.example.com:8080/"],
        id="edge_07_wildcard_listener_on_8080",
    ),
    pytest.param(
        route(rules=[rule(match("/api/v1"))]),
        [gateway(addresses=[IP])],
        ["http://203.0.113.1/api/v1"],
        id="edge_08_rule_path",
    ),
    pytest.param(
        route(
            rules=[
                rule(match("/ns/name/v1/completions", type_="PathPrefix"), kind=POOL),
                rule(match("/ns/name/v1/chat/completions", type_="PathPrefix"), kind=POOL),
                rule(match("/ns/name/v1/messages", type_="PathPrefix"), kind=POOL),
                rule(match("/ns/name", type_="PathPrefix")),
            ]
        ),
        [gateway(addresses=[IP])],
        ["http://203.0.113.1/ns/name"],
        id="edge_09_service_path",
    ),
    pytest.param(
        route(
            rules=[
                rule(match("/ns/name/v1/completions"), kind=POOL),
                rule(match("/ns/name/v1/chat/completions"), kind=POOL),
                rule(match("/ns/name/v1/messages"), kind=POOL),
            ]
        ),
        [gateway(addresses=[IP])],
        ["http://203.0.113.1/ns/name/v1/messages"],
        id="edge_10_pool_paths_only",
    ),
    pytest.param(
        route(rules=[rule(match("/ns/name/v1/completions"), kind=POOL), rule(match("/ns/name"), kind=None)]),
        [gateway(addresses=[IP])],
        ["http://203.0.113.1/ns/name"],
        id="edge_11_kind_defaults_to_service",
    ),
    pytest.param(
        route(rules=[rule(match(None, headers=["x-custom"])), rule(match("/ns/name"))]),
        [gateway(addresses=[IP])],
        ["http://203.0.113.1/ns/name"],
        id="edge_12_header_only_user_rule",
    ),
]

SCHEME_CASES = [
    pytest.param(
        route(), [gateway(listeners=[https()], addresses=[IP])], ["https://203.0.113.1/"], id="edge_15_https"
    ),
    pytest.param(
        route(),
        [gateway(listeners=[listener("tls", "TLS", 443)], addresses=[IP])],
        ["https://203.0.113.1/"],
        id="edge_15_tls_is_https",
    ),
    pytest.param(route(), [gateway(addresses=["2001:db8::1"])], ["http://[2001:db8::1]/"], id="edge_16_ipv6"),
    pytest.param(
        route(),
        [gateway(listeners=[listener(port=8080)], addresses=[IP])],
        ["http://203.0.113.1:8080/"],
        id="edge_17_http_8080",
    ),
    pytest.param(
        route(hostnames=["secure.example.com"]),
        [gateway(listeners=[https(port=8443)], addresses=[IP])],
        ["https://secure.example.com:8443/"],
        id="edge_17_https_8443",
    ),
    pytest.param(
        route(),
        [gateway(listeners=[listener("http"), https("https")], addresses=[IP])],
        ["https://203.0.113.1/", "http://203.0.113.1/"],
        id="edge_17_default_ports_hidden",
    ),
    pytest.param(
        route(
            namespace="default-ns",
            parents=[
                parent("z-gateway", "z-namespace"),
                parent("a-gateway", "a-namespace"),
                parent("b-gateway", "a-namespace"),
            ],
        ),
        [
            gateway("z-gateway", "z-namespace", addresses=["203.0.113.2"]),
            gateway("a-gateway", "a-namespace", addresses=["203.0.113.1"]),
            gateway("b-gateway", "a-namespace", addresses=["203.0.113.3"]),
        ],
        ["http://203.0.113.2/", "http://203.0.113.1/", "http://203.0.113.3/"],
        id="edge_18_parent_ref_order_no_sort",
    ),
    pytest.param(
        route(namespace="route-ns", parents=[parent("same-ns-gateway", None)]),
        [gateway("same-ns-gateway", "route-ns", addresses=[IP])],
        ["http://203.0.113.1/"],
        id="edge_19_parent_ref_namespace_defaults_to_route",
    ),
    pytest.param(
        route(),
        [gateway(addresses=["192.168.1.100", "10.0.0.50"])],
        ["http://10.0.0.50/", "http://192.168.1.100/"],
        id="edge_20_private_addresses",
    ),
    pytest.param(
        route(),
        [gateway(addresses=[("Hostname", "lb.example.com"), ("Hostname", "api.example.com")])],
        ["http://api.example.com/", "http://lb.example.com/"],
        id="edge_20_hostname_addresses",
    ),
    pytest.param(
        route(),
        [
            gateway(
                addresses=[("IPAddress", IP), ("Hostname", "api.example.com"), ("Hostname", "lb.example.com")]
            )
        ],
        ["http://203.0.113.1/", "http://api.example.com/", "http://lb.example.com/"],
        id="edge_20_mixed_addresses",
    ),
    pytest.param(
        route(parents=[parent(section="http")]),
        [
            gateway(
                listeners=[
                    listener("http", hostname="http.example.com"),
                    https("https", hostname="https.example.com"),
                    listener("internal", port=8080, hostname="internal.example.com"),
                ],
                addresses=[IP],
            )
        ],
        ["http://http.example.com/"],
        id="edge_23_section_name_selects_one_listener",
    ),
    pytest.param(
        route(),
        [
            gateway(
                listeners=[
                    listener("http", hostname="api.example.com"),
                    https("https", hostname="api.example.com"),
                ],
                addresses=[IP],
            )
        ],
        ["https://api.example.com/", "http://api.example.com/"],
        id="edge_25_same_hostname_on_both_listeners",
    ),
]

BOTH = [listener("http-listener"), https("https-listener")]
PREFERENCE_CASES = [
    pytest.param(
        route(), BOTH, "https", ["https://203.0.113.1/", "http://203.0.113.1/"], id="edge_24_prefer_https"
    ),
    pytest.param(
        route(), BOTH, "http", ["http://203.0.113.1/", "https://203.0.113.1/"], id="edge_24_prefer_http"
    ),
    pytest.param(
        route(), BOTH, "", ["https://203.0.113.1/", "http://203.0.113.1/"], id="edge_24_no_preference"
    ),
    pytest.param(
        route(parents=[parent(section="http-listener")]),
        BOTH,
        "https",
        ["http://203.0.113.1/"],
        id="edge_24_section_beats_preference",
    ),
    pytest.param(
        route(), [listener()], "https", ["http://203.0.113.1/"], id="edge_24_only_http_with_https_preferred"
    ),
    pytest.param(
        route(), [https(port=8443)], "https", ["https://203.0.113.1:8443/"], id="edge_24_only_https_8443"
    ),
    pytest.param(
        route(), [listener(port=8080)], "", ["http://203.0.113.1:8080/"], id="edge_24_only_http_8080"
    ),
]


@pytest.mark.parametrize(("http_route", "gateways", "expected"), ADDRESS_CASES + SCHEME_CASES)
def test_r_disc_6_external_urls(http_route: HTTPRoute, gateways: list[Gateway], expected: list[str]) -> None:
    assert d.urls(http_route, gateways) == expected


@pytest.mark.parametrize(("http_route", "listeners", "url_scheme", "expected"), PREFERENCE_CASES)
def test_r_disc_2_listener_preference_orders_urls(
    http_route: HTTPRoute, listeners: list[Listener], url_scheme: str, expected: list[str]
) -> None:
    assert (
        d.urls(http_route, [gateway(listeners=listeners, addresses=[IP])], url_scheme=url_scheme) == expected
    )


@pytest.mark.parametrize(
    ("header", "rules", "expected"),
    [
        pytest.param(
            HEADER,
            [
                rule(match("/ns/name/v1/completions"), kind=POOL),
                rule(match("/v1/completions", type_="Exact", headers=[HEADER]), kind=POOL),
                rule(match("/ns/name")),
                rule(match("/", type_="PathPrefix", headers=[HEADER])),
            ],
            ["http://203.0.113.1/", "http://203.0.113.1/ns/name"],
            id="edge_13_model_routing_root_and_path",
        ),
        pytest.param(
            HEADER,
            [rule(match("/ns/name")), rule(match("/custom", type_="Exact", headers=["X-Custom-Header"]))],
            ["http://203.0.113.1/ns/name"],
            id="edge_14_user_header_rule_not_advertised",
        ),
        pytest.param(
            "",
            [rule(match("/ns/name")), rule(match(None, headers=[HEADER]))],
            ["http://203.0.113.1/ns/name"],
            id="edge_14_no_header_config",
        ),
    ],
)
def test_r_disc_4_paths_follow_header_config(
    header: str, rules: list[HTTPRouteRule], expected: list[str]
) -> None:
    assert d.urls(route(rules=rules), [gateway(addresses=[IP])], header=header) == expected


def test_r_disc_3_origin_names_the_discovering_gateway() -> None:
    """Edge case 21."""
    http_route = route(
        namespace="gw-ns", parents=[parent("gateway-a", "gw-ns"), parent("gateway-b", "gw-ns")]
    )
    gateways = [
        gateway("gateway-a", "gw-ns", listeners=[https()], addresses=["gateway-a.example.com"]),
        gateway("gateway-b", "gw-ns", listeners=[listener(port=8080)], addresses=["gateway-b.example.com"]),
    ]
    found = {item.url: item.origin for item in d.discover(http_route, gateways)}
    assert found == {
        "https://gateway-a.example.com/": ObjectReference(
            group="gateway.networking.k8s.io", kind="Gateway", name="gateway-a", namespace="gw-ns"
        ),
        "http://gateway-b.example.com:8080/": ObjectReference(
            group="gateway.networking.k8s.io", kind="Gateway", name="gateway-b", namespace="gw-ns"
        ),
    }


# --- internal URLs (R-DISC-6.2, R-SVC-3), edge cases 26-32 ---------------------------------------------

GW_SVC = "http://gateway-service.gateway-ns.svc.cluster.local"
MULTI = "multi-gw-svc.gw-ns.svc.cluster.local"


def _gw_ns(name: str = "my-gateway", *listeners_: Listener, addresses: list[str] | None = None) -> Gateway:
    return gateway(name, "gateway-ns", listeners=list(listeners_) or None, addresses=addresses or [])


def _multi(*listeners_: Listener, addresses: tuple[str, ...] = (IP,)) -> Gateway:
    return gateway("multi-gw", "gw-ns", listeners=list(listeners_), addresses=addresses)


INTERNAL_CASES = [
    pytest.param(
        _gw_ns(addresses=[IP]),
        service("gateway-service", "gateway-ns"),
        {},
        ["http://203.0.113.1/", f"{GW_SVC}/"],
        id="edge_26_labelled_service",
    ),
    pytest.param(
        _gw_ns(addresses=[IP]),
        service("my-gateway", "gateway-ns"),
        {},
        ["http://203.0.113.1/", "http://my-gateway.gateway-ns.svc.cluster.local/"],
        id="edge_26_service_named_like_gateway",
    ),
    pytest.param(
        _gw_ns("my-gateway", listener("http-alt", port=8080), addresses=[IP]),
        service("gateway-service", "gateway-ns"),
        {},
        ["http://203.0.113.1:8080/", f"{GW_SVC}:8080/"],
        id="edge_27_port_8080",
    ),
    pytest.param(
        _gw_ns("my-gateway", https(), addresses=[IP]),
        service("gateway-service", "gateway-ns"),
        {},
        ["https://203.0.113.1/", "https://gateway-service.gateway-ns.svc.cluster.local/"],
        id="edge_27_https",
    ),
    pytest.param(
        _gw_ns("my-gateway", https(), addresses=["gateway-service.gateway-ns.svc.cluster.local"]),
        service("gateway-service", "gateway-ns"),
        {},
        ["https://gateway-service.gateway-ns.svc.cluster.local/"],
        id="edge_28_internal_duplicate_of_external_suppressed",
    ),
    pytest.param(
        gateway(
            "gw",
            "gw-ns",
            listeners=[listener("http"), https("https")],
            addresses=["gw-svc.gw-ns.svc.cluster.local"],
        ),
        service("gw-svc", "gw-ns"),
        {},
        ["https://gw-svc.gw-ns.svc.cluster.local/", "http://gw-svc.gw-ns.svc.cluster.local/"],
        id="edge_28_duplicates_suppressed_per_listener",
    ),
    pytest.param(
        _gw_ns("my-gateway", listener(port=8080)),
        service("gateway-service", "gateway-ns"),
        {},
        [f"{GW_SVC}:8080/"],
        id="edge_29_internal_only",
    ),
    pytest.param(
        _gw_ns("my-gateway", listener(port=8080)),
        service("gateway-service", "gateway-ns"),
        {"header": HEADER, "rules": [rule(match("/ns/name")), rule(match(None, headers=[HEADER]))]},
        [f"{GW_SVC}:8080/", f"{GW_SVC}:8080/ns/name"],
        id="edge_29_internal_only_two_paths",
    ),
    pytest.param(
        _multi(listener("http"), https("https")),
        service("multi-gw-svc", "gw-ns"),
        {},
        ["https://203.0.113.1/", "http://203.0.113.1/", f"https://{MULTI}/", f"http://{MULTI}/"],
        id="edge_30_external_then_internal",
    ),
    pytest.param(
        _multi(listener("http"), https("https")),
        service("multi-gw-svc", "gw-ns"),
        {"url_scheme": "http"},
        ["http://203.0.113.1/", "https://203.0.113.1/", f"http://{MULTI}/", f"https://{MULTI}/"],
        id="edge_30_http_preferred_in_both_halves",
    ),
    pytest.param(
        _multi(listener("http"), https("https"), listener("http-alt", port=8080)),
        service("multi-gw-svc", "gw-ns"),
        {"section": "https"},
        ["https://203.0.113.1/", f"https://{MULTI}/"],
        id="edge_30_section_name",
    ),
    pytest.param(
        _multi(listener("http", port=8080), https("https", port=8443)),
        service("multi-gw-svc", "gw-ns"),
        {},
        [
            "https://203.0.113.1:8443/",
            "http://203.0.113.1:8080/",
            f"https://{MULTI}:8443/",
            f"http://{MULTI}:8080/",
        ],
        id="edge_31_non_default_ports",
    ),
    pytest.param(
        _multi(listener("http"), https("https"), listener("http-alt", port=8080)),
        service("multi-gw-svc", "gw-ns", ports=[80, 8080]),
        {},
        [
            "https://203.0.113.1/",
            "http://203.0.113.1/",
            "http://203.0.113.1:8080/",
            f"http://{MULTI}/",
            f"http://{MULTI}:8080/",
        ],
        id="edge_32_r_svc_3_only_listeners_on_service_ports",
    ),
    pytest.param(
        _multi(listener("http"), https("https")),
        service("multi-gw-svc", "gw-ns", ports=[9090]),
        {},
        ["https://203.0.113.1/", "http://203.0.113.1/"],
        id="edge_32_r_svc_3_no_matching_port",
    ),
    pytest.param(
        _multi(listener("http")),
        service("multi-gw-svc", "gw-ns"),
        {"header": HEADER, "rules": [rule(match("/ns/name")), rule(match(None, headers=[HEADER]))]},
        ["http://203.0.113.1/", f"http://{MULTI}/", "http://203.0.113.1/ns/name", f"http://{MULTI}/ns/name"],
        id="r_disc_10_path_order_then_external_before_internal",
    ),
]


@pytest.mark.parametrize(("gw", "backing", "options", "expected"), INTERNAL_CASES)
def test_r_disc_6_internal_urls_from_backing_service(
    gw: Gateway, backing: Service, options: dict[str, Any], expected: list[str]
) -> None:
    http_route = route(
        namespace=gw.namespace,
        parents=[parent(gw.name, gw.namespace, options.get("section"))],
        rules=options.get("rules"),
    )
    found = d.urls(
        http_route,
        [gw],
        [backing],
        url_scheme=options.get("url_scheme", ""),
        header=options.get("header", ""),
    )
    assert found == expected


def test_r_svc_3_port_match_ignores_target_port_and_protocol() -> None:
    backing = service("svc", "test-ns", ports=[80])
    backing.spec.ports[0].target_port = 8080  # type: ignore[index]
    backing.spec.ports[0].protocol = "UDP"  # type: ignore[index]
    found = d.urls(route(), [gateway(listeners=[listener(port=8080), listener("b", port=80)])], [backing])
    assert found == ["http://svc.test-ns.svc.cluster.local/"]


def test_r_disc_6_internal_host_uses_cluster_domain() -> None:
    env = Environment(cluster_domain="corp.example")
    found = d.discover(route(), [gateway()], [service("svc", "test-ns")], env=env)
    assert [item.url for item in found] == ["http://svc.test-ns.svc.corp.example/"]


def test_url_dedup_6021_listeners_sharing_a_port_give_one_url() -> None:
    """KServe #6021 (commit 9ced22e00, router_discovery.go ``DiscoverURLs``; ported from the case
    "listeners sharing a port do not produce duplicate URLs" of router_discovery_test.go): a route with
    pinned hostnames builds the same URL on every listener of a port, and the gateway lists it once."""
    gw = gateway(
        "my-gateway",
        "gw-ns",
        listeners=[https("https-a", hostname="a.example.com"), https("https-b", hostname="b.example.com")],
        addresses=["1.2.3.4"],
    )
    http_route = route(hostnames=["pinned.example.com"], parents=[parent("my-gateway", "gw-ns")])
    assert d.urls(http_route, [gw]) == ["https://pinned.example.com/"]


def test_url_dedup_6021_listeners_falling_back_to_addresses_give_one_url() -> None:
    """KServe #6021: listeners without hostnames all use the gateway's addresses, so two of them on one
    port build the same URL; it was listed twice before (quirk Q9), once since."""
    gw = gateway(listeners=[listener("a"), listener("b")], addresses=[IP])
    assert d.urls(route(), [gw]) == ["http://203.0.113.1/"]


def test_url_dedup_6021_is_per_parent_ref_not_across_them() -> None:
    """KServe #6021 keeps its ``seen`` set per resolved gateway: the same gateway named by two parentRefs
    still gives its URLs twice (what remains of quirk Q9)."""
    gw = gateway(addresses=[IP])
    http_route = route(parents=[parent("gw"), parent("gw", section="listener")])
    assert d.urls(http_route, [gw]) == ["http://203.0.113.1/", "http://203.0.113.1/"]


def test_q10_route_wildcard_hostname_used_verbatim() -> None:
    assert d.urls(route(hostnames=["*.example.com"]), [gateway(addresses=[IP])]) == ["http://*.example.com/"]


def test_q14_empty_wildcard_label() -> None:
    gw = gateway(listeners=[listener(hostname="*.example.com")], addresses=[IP])
    found = d.discover(route(), [gw], env=Environment(wildcard_label=""))
    assert [item.url for item in found] == ["http://.example.com/"]


# --- errors (R-DISC-2, R-DISC-6, R-DISC-8, R-DISC-9) -----------------------------------------------------

TCP = listener("tcp", "TCP", 9000)
NO_HTTP_LISTENER = (
    "failed to select listeners for gateway test-ns/gw: no HTTP-capable listener found in gateway test-ns/gw"
)
ERROR_CASES = [
    pytest.param(
        route(),
        gateway(listeners=[TCP], addresses=[IP]),
        [],
        NO_HTTP_LISTENER,
        id="edge_22_only_tcp_listener",
    ),
    pytest.param(
        route(),
        gateway(listeners=[], addresses=[IP]),
        [],
        NO_HTTP_LISTENER,
        id="edge_22_no_listeners",
    ),
    pytest.param(
        route(parents=[parent(section="nonexistent-listener")]),
        gateway(addresses=[IP]),
        [],
        "failed to select listeners for gateway test-ns/gw: "
        'listener "nonexistent-listener" not found in gateway test-ns/gw',
        id="edge_22_unknown_section_no_fallback",
    ),
    pytest.param(
        route(parents=[parent(section="tcp")]),
        gateway(listeners=[TCP], addresses=[IP]),
        [],
        "failed to resolve scheme for gateway test-ns/gw listener tcp: "
        'listener "tcp" uses unsupported protocol TCP for HTTP routing',
        id="r_disc_6_sectioned_non_http_listener_external",
    ),
    pytest.param(
        route(parents=[parent(section="tcp")]),
        gateway(listeners=[TCP]),
        [service("gw-svc", "test-ns")],
        "failed to build internal URL for Gateway test-ns/gw listener tcp: "
        "failed to parse URL ://gw-svc.test-ns.svc.cluster.local/: "
        'parse "://gw-svc.test-ns.svc.cluster.local/": missing protocol scheme',
        id="r_disc_6_sectioned_non_http_listener_internal",
    ),
    pytest.param(
        route(),
        gateway(addresses=["bad host"]),
        [],
        "failed to combine URLs for Gateway test-ns/gw: "
        'failed to parse URL http://bad host/: parse "http://bad host/": invalid character " " in host name',
        id="r_disc_8_unparsable_external_url",
    ),
]


@pytest.mark.parametrize(("http_route", "gw", "services", "message"), ERROR_CASES)
def test_r_disc_errors_carry_go_texts(
    http_route: HTTPRoute, gw: Gateway, services: list[Service], message: str
) -> None:
    with pytest.raises(DiscoveryError) as err:
        d.discover(http_route, [gw], services)
    assert not isinstance(err.value, NoURLsDiscoveredError)
    assert str(err.value) == message


def test_r_disc_9_no_urls_names_the_first_gateway() -> None:
    """Edge case 22: an HTTP listener but no addresses and no backing Service."""
    http_route = route(parents=[parent("gw"), parent("other")])
    with pytest.raises(NoURLsDiscoveredError) as err:
        d.discover(http_route, [gateway("gw"), gateway("other")])
    assert str(err.value) == (
        "no URLs discovered for Gateway test-ns/gw (no external addresses and no backing service found)"
    )
    assert (err.value.gateway_namespace, err.value.gateway_name) == ("test-ns", "gw")


def test_r_disc_9_one_gateway_with_urls_is_enough() -> None:
    http_route = route(parents=[parent("gw"), parent("other")])
    assert d.urls(http_route, [gateway("gw"), gateway("other", addresses=[IP])]) == ["http://203.0.113.1/"]


def test_r_disc_9_route_without_parent_refs_yields_nothing() -> None:
    assert d.urls(route(parents=[]), []) == []


def test_r_disc_2_error_aborts_before_later_gateways() -> None:
    http_route = route(parents=[parent("broken"), parent("gw")])
    gateways = [gateway("broken", listeners=[TCP], addresses=[IP]), gateway("gw", addresses=[IP])]
    with pytest.raises(DiscoveryError, match=r"^failed to select listeners for gateway test-ns/broken: "):
        d.discover(http_route, gateways)


def test_q9_edge_84_two_routes_on_one_gateway_give_duplicate_urls() -> None:
    gw = gateway(addresses=[IP])
    rules = [rule(match("/ns/name"))]
    found = d.urls(route("route-a", rules=rules), [gw]) + d.urls(route("route-b", rules=rules), [gw])
    assert found == ["http://203.0.113.1/ns/name", "http://203.0.113.1/ns/name"]


# --- resolved gateways (3.8.1 gatewayKeys, R-ST-10), edge case 40 -------------------------------------


@pytest.mark.parametrize(
    ("parents", "expected"),
    [
        ([], []),
        ([parent("my-gw", None)], [("gw-ns", "my-gw")]),
        ([parent("my-gw", "explicit-ns")], [("explicit-ns", "my-gw")]),
        (
            [parent("b-gw", "explicit-ns"), parent("my-gw", None), parent("a-gw", "other-ns")],
            [("explicit-ns", "b-gw"), ("gw-ns", "my-gw"), ("other-ns", "a-gw")],
        ),
    ],
    ids=[
        "edge_40_empty",
        "edge_40_gateway_namespace",
        "edge_40_explicit_namespace",
        "edge_40_mixed_keep_order",
    ],
)
def test_gateway_keys_from_resolved_gateways(
    parents: list[ParentReference], expected: list[tuple[str, str]]
) -> None:
    # The Gateway object lives in gw-ns whatever the parentRef says, so the key shows which one is used.
    resolved = [
        ResolvedGateway(gateway=gateway(p.name, "gw-ns"), gateway_class=GatewayClass(), parent_ref=p)
        for p in parents
    ]
    assert resolved_gateway_keys(resolved) == expected


def test_r_st_10_dedupe_keeps_first_occurrence_and_its_parent_ref() -> None:
    http_route = route(
        parents=[
            parent("a", section="https"),
            parent("b"),
            parent("a", section="http"),
            parent("b", "other-ns"),
        ]
    )
    gateways = [gateway("a"), gateway("b"), gateway("b", "other-ns")]
    unique = dedupe_resolved(d.resolve(http_route, gateways))
    assert [(r.gateway.namespace, r.gateway.name, r.parent_ref.section_name) for r in unique] == [
        ("test-ns", "a", "https"),
        ("test-ns", "b", None),
        ("other-ns", "b", None),
    ]
