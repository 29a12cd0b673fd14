"""``inferenceservice-config`` ingress settings parsed with KServe's types, checks and messages (why #7)."""

from __future__ import annotations

import json

import pytest

from llmisvc_core.world.config import ConfigError, Environment, load_router_config

PREFIX = "failed to convert InferenceServiceConfigMap to IngressConfig: "


def _load(ingress: dict[str, object]) -> object:
    return load_router_config({"ingress": json.dumps(ingress)}, Environment())


@pytest.mark.parametrize(
    ("ingress", "message"),
    [
        (
            {"ingressGateway": "x", "enableGatewayApi": "true"},
            "unable to parse ingress config json: json: cannot unmarshal string into Go struct field "
            "IngressConfig.enableGatewayApi of type bool",
        ),
        (
            {"ingressGateway": 1},
            "unable to parse ingress config json: json: cannot unmarshal number into Go struct field "
            "IngressConfig.ingressGateway of type string",
        ),
        (
            {"ingressGateway": "x", "enableGatewayApi": True},
            "invalid ingress config - kserveIngressGateway is required",
        ),
        (
            {"ingressGateway": "x", "enableGatewayApi": True, "kserveIngressGateway": "a/b/c"},
            "invalid ingress config - kserveIngressGateway should be in the format <namespace>/<name>",
        ),
        (
            {"ingressGateway": "x", "enableGatewayApi": True, "kserveIngressGateway": "A/b"},
            "invalid ingress config - kserveIngressGateway gateway namespace is invalid",
        ),
        ({"enableGatewayApi": False}, "invalid ingress config - ingressGateway is required"),
    ],
    ids=[
        "bool-as-string",
        "number-as-string",
        "gateway-required",
        "gateway-format",
        "namespace",
        "ingress-gateway",
    ],
)
def test_why_7_ingress_config_errors_read_like_kserves(ingress: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(ingress)
    assert str(info.value) == PREFIX + message


def test_why_7_a_gateway_that_is_not_namespace_slash_name_is_a_name_in_the_kserve_namespace() -> None:
    config = _load({"ingressGateway": "x", "kserveIngressGateway": "a/b/c"})
    assert (config.ingress_gateway_namespace, config.ingress_gateway_name) == ("kserve", "a/b/c")  # type: ignore[attr-defined]


def test_keys_match_case_insensitively_and_null_leaves_the_default() -> None:
    config = _load({"IngressGateway": "x", "kserveingressgateway": "edge/gw", "urlScheme": None})
    assert (config.ingress_gateway_namespace, config.ingress_gateway_name, config.url_scheme) == (  # type: ignore[attr-defined]
        "edge",
        "gw",
        "http",
    )
