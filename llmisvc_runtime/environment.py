"""Process settings read once from the environment (spec 1.6): wildcard label, cluster domain, namespace,
the prefix of the well-known LLMInferenceServiceConfigs."""

from __future__ import annotations

import os
from collections.abc import Mapping

from llmisvc_core.world.config import (
    DEFAULT_CLUSTER_DOMAIN,
    DEFAULT_CONFIG_PREFIX,
    DEFAULT_KSERVE_NAMESPACE,
    DEFAULT_WILDCARD_LABEL,
    Environment,
)

RESOLV_CONF = "/etc/resolv.conf"


def environment_from(env: Mapping[str, str] | None = None, resolv_conf: str = RESOLV_CONF) -> Environment:
    """Capture the settings; a variable that is set wins even when empty, as in KServe (quirk Q14)."""
    values = os.environ if env is None else env
    return Environment(
        wildcard_label=values.get("GATEWAY_API_WILDCARD_HOSTNAME", DEFAULT_WILDCARD_LABEL),
        cluster_domain=cluster_domain(values, resolv_conf),
        kserve_namespace=values.get("POD_NAMESPACE", DEFAULT_KSERVE_NAMESPACE),
        config_prefix=values.get("LLM_INFERENCE_SERVICE_CONFIG_PREFIX", DEFAULT_CONFIG_PREFIX),
    )


def cluster_domain(values: Mapping[str, str], resolv_conf: str = RESOLV_CONF) -> str:
    """Knative's rule: no resolv.conf -> cluster.local (CLUSTER_DOMAIN ignored, quirk Q15); else the
    variable if non-empty; else the ``svc.`` entry of the first ``search`` line."""
    try:
        with open(resolv_conf, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return DEFAULT_CLUSTER_DOMAIN
    if values.get("CLUSTER_DOMAIN"):
        return values["CLUSTER_DOMAIN"]
    for line in lines:
        fields = line.split(" ")
        if fields and fields[0] == "search":
            for field in fields[1:]:
                if field.startswith("svc."):
                    domain = field.removeprefix("svc.")
                    return domain.removesuffix(".")
    return DEFAULT_CLUSTER_DOMAIN
