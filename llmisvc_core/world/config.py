"""Configuration snapshots: KServe's ``inferenceservice-config`` ingress settings and process settings.

Both are plain values captured once per pass (decision P1 / Q29) so that workflow code and ``plan`` stay
deterministic: nothing here reads the environment or the cluster.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from llmisvc_core.errors import InvalidInputError
from llmisvc_core.gocompat import ingress_json
from llmisvc_core.gocompat.gofmt import quote

CONFIGMAP_NAME = "inferenceservice-config"
INGRESS_KEY = "ingress"
DEFAULT_KSERVE_NAMESPACE = "kserve"
DEFAULT_INGRESS_GATEWAY_NAME = "kserve-ingress-gateway"
DEFAULT_HEADER_NAME = "X-Gateway-Model-Name"
DEFAULT_WILDCARD_LABEL = "inference"
DEFAULT_CLUSTER_DOMAIN = "cluster.local"
DEFAULT_CONFIG_PREFIX = "kserve-"
#: ``loraModelRoutingStrategy`` values (KServe #6174): one Exact match per model, or one regex for all.
LORA_STRATEGY_EXACT = "exact"
LORA_STRATEGY_REGEX = "regex"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ModelRoutingMode(StrEnum):
    ENABLED = "enabled"
    DISABLED = "disabled"
    FORCED = "forced"

    @classmethod
    def parse(cls, value: str) -> ModelRoutingMode:
        """Case-insensitive; anything that is not ``forced`` or ``disabled`` means enabled."""
        lowered = value.lower()
        if lowered == "forced":
            return cls.FORCED
        if lowered == "disabled":
            return cls.DISABLED
        return cls.ENABLED


class Environment(BaseModel):
    """Process-wide settings (spec 1.6), read once by the entry point and passed in."""

    model_config = ConfigDict(frozen=True)

    wildcard_label: str = DEFAULT_WILDCARD_LABEL
    cluster_domain: str = DEFAULT_CLUSTER_DOMAIN
    kserve_namespace: str = DEFAULT_KSERVE_NAMESPACE
    #: ``LLM_INFERENCE_SERVICE_CONFIG_PREFIX``: the well-known configs are ``<prefix>config-llm-…``.
    config_prefix: str = DEFAULT_CONFIG_PREFIX


class RouterConfig(BaseModel):
    """The ``ingress`` settings the router uses (spec 1.5)."""

    model_config = ConfigDict(frozen=True)

    url_scheme: str = "http"
    enable_tls: bool = False
    model_based_routing_header_name: str = DEFAULT_HEADER_NAME
    model_based_routing_mode: ModelRoutingMode = ModelRoutingMode.ENABLED
    ingress_gateway_namespace: str = DEFAULT_KSERVE_NAMESPACE
    ingress_gateway_name: str = DEFAULT_INGRESS_GATEWAY_NAME
    #: ``loraModelRoutingStrategy``, trimmed and lower-cased: ``exact`` or ``regex`` (KServe #6174).
    lora_model_routing_strategy: str = LORA_STRATEGY_EXACT


class ConfigError(InvalidInputError):
    """The ConfigMap exists but cannot be used; the pass fails as in Go."""


def load_router_config(configmap_data: dict[str, str] | None, env: Environment) -> RouterConfig:
    """Build the config from the ConfigMap's data; ``None`` (no ConfigMap) gives the defaults (P1).

    A present ConfigMap without an ``ingress`` key gives the defaults with an empty ingress gateway name,
    as KServe does; the shipped ``kserve/kserve-ingress-gateway`` default applies only when the ConfigMap
    is absent.
    """
    if configmap_data is None:
        return RouterConfig(ingress_gateway_namespace=env.kserve_namespace)
    raw = configmap_data.get(INGRESS_KEY)
    if raw is None:
        return RouterConfig(ingress_gateway_namespace=env.kserve_namespace, ingress_gateway_name="")
    return _parse_ingress(raw, env)


#: KServe's prefix for an ingress config it cannot use (``LoadConfig``).
CONVERT_PREFIX = "failed to convert InferenceServiceConfigMap to IngressConfig: "


def _parse_ingress(raw: str, env: Environment) -> RouterConfig:
    """KServe's ``NewIngressConfig`` and ``NewConfig``: typed decoding, the checks in KServe's order, and
    the gateway split on ``/`` (exactly two parts give namespace and name; anything else is a name in the
    KServe namespace)."""
    try:
        ingress = ingress_json.decode(raw)
    except ingress_json.IngressJSONError as err:
        raise ConfigError(f"{CONVERT_PREFIX}unable to parse ingress config json: {err}") from err
    gateway = str(ingress.get("kserveIngressGateway", ""))
    if ingress.get("enableGatewayApi") is True:
        problem = _gateway_problem(gateway)
        if problem:
            raise ConfigError(f"{CONVERT_PREFIX}invalid ingress config - kserveIngressGateway {problem}")
    if not ingress.get("ingressGateway"):
        raise ConfigError(f"{CONVERT_PREFIX}invalid ingress config - ingressGateway is required")
    strategy = _lora_strategy(str(ingress.get("loraModelRoutingStrategy", "")))
    parts = gateway.split("/")
    namespace, name = (parts[0], parts[1]) if len(parts) == 2 else (env.kserve_namespace, gateway)
    return RouterConfig(
        lora_model_routing_strategy=strategy,
        url_scheme=str(ingress.get("urlScheme") or "http"),
        enable_tls=ingress.get("enableLLMInferenceServiceTLS") is True,
        model_based_routing_header_name=str(
            ingress.get("modelBasedRoutingHeaderName") or DEFAULT_HEADER_NAME
        ),
        model_based_routing_mode=ModelRoutingMode.parse(str(ingress.get("modelBasedRoutingMode") or "")),
        ingress_gateway_namespace=namespace,
        ingress_gateway_name=name,
    )


def _lora_strategy(raw: str) -> str:
    """KServe ``NewIngressConfig`` (#6174): empty means ``exact``; any other value than ``exact`` or
    ``regex`` (case-insensitive, trimmed) fails the config like any other invalid ingress key."""
    strategy = raw.strip().lower()
    if strategy == "":
        return LORA_STRATEGY_EXACT
    if strategy in (LORA_STRATEGY_EXACT, LORA_STRATEGY_REGEX):
        return strategy
    raise ConfigError(
        f"{CONVERT_PREFIX}invalid ingress config - loraModelRoutingStrategy must be "
        f"{quote(LORA_STRATEGY_EXACT)} or {quote(LORA_STRATEGY_REGEX)}, got {quote(raw)}"
    )


def _gateway_problem(value: str) -> str:
    """What is wrong with a ``kserveIngressGateway`` when the Gateway API is enabled ("" when nothing)."""
    if not value:
        return "is required"
    parts = value.split("/")
    if len(parts) != 2:
        return "should be in the format <namespace>/<name>"
    if not _is_dns_label(parts[0]):
        return "gateway namespace is invalid"
    if not _is_dns_label(parts[1]):
        return "gateway name is invalid"
    return ""


def _is_dns_label(value: str) -> bool:
    return bool(_DNS_LABEL.match(value)) and len(value) <= 63
