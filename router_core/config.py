"""Configuration snapshots: KServe's ``inferenceservice-config`` ingress settings and process settings.

Both are plain values captured once per pass (decision P1 / Q29) so that workflow code and ``plan`` stay
deterministic: nothing here reads the environment or the cluster.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

CONFIGMAP_NAME = "inferenceservice-config"
INGRESS_KEY = "ingress"
DEFAULT_KSERVE_NAMESPACE = "kserve"
DEFAULT_INGRESS_GATEWAY_NAME = "kserve-ingress-gateway"
DEFAULT_HEADER_NAME = "X-Gateway-Model-Name"
DEFAULT_WILDCARD_LABEL = "inference"
DEFAULT_CLUSTER_DOMAIN = "cluster.local"
DEFAULT_CONFIG_PREFIX = "kserve-"

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


class ConfigError(ValueError):
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


def _parse_ingress(raw: str, env: Environment) -> RouterConfig:
    try:
        ingress = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ConfigError(f"failed to parse ingress config json: {err}") from err
    if not isinstance(ingress, dict):
        raise ConfigError("failed to parse ingress config json: not a JSON object")
    if not _text(ingress, "ingressGateway"):
        raise ConfigError("invalid ingress config - ingressGateway is required")
    gateway = _text(ingress, "kserveIngressGateway")
    if ingress.get("enableGatewayApi") is True and not _is_gateway_key(gateway):
        raise ConfigError(
            "invalid ingress config - kserveIngressGateway is required and must be in the form "
            "<namespace>/<name>"
        )
    namespace, _, name = gateway.rpartition("/")
    return RouterConfig(
        url_scheme=_text(ingress, "urlScheme") or "http",
        enable_tls=ingress.get("enableLLMInferenceServiceTLS") is True,
        model_based_routing_header_name=_text(ingress, "modelBasedRoutingHeaderName") or DEFAULT_HEADER_NAME,
        model_based_routing_mode=ModelRoutingMode.parse(_text(ingress, "modelBasedRoutingMode")),
        ingress_gateway_namespace=namespace or env.kserve_namespace,
        ingress_gateway_name=name,
    )


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _is_gateway_key(value: str) -> bool:
    parts = value.split("/")
    return len(parts) == 2 and all(_DNS_LABEL.match(p) and len(p) <= 63 for p in parts)
