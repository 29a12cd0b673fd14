"""The CustomResourceDefinitions this project uses, as data, and the selection syntax to install some.

A selection is ``"all"``, ``"none"``, or names separated by commas: a short key (``llmisvc``,
``llmisvcconfig``,
``gateway``, ``httproute``, ``gatewayclass``, ``pool-v1``, ``pool-v1alpha2``), a bundle
(``gateway-api``, ``pools``) or a full CRD name such as ``httproutes.gateway.networking.k8s.io``.
Being able to install only some of them is what lets product tests exercise "CRD missing".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SERVING_GROUP = "serving.kserve.io"
GATEWAY_GROUP = "gateway.networking.k8s.io"
POOL_V1_GROUP = "inference.networking.k8s.io"
POOL_V1ALPHA2_GROUP = "inference.networking.x-k8s.io"


@dataclass(frozen=True)
class CrdSpec:
    key: str
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    printer_columns: tuple[tuple[str, str], ...] = ()  # (column name, JSON path)

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"


PROJECT_CRDS: tuple[CrdSpec, ...] = (
    CrdSpec(
        "llmisvc",
        SERVING_GROUP,
        "v1alpha2",
        "LLMInferenceService",
        "llminferenceservices",
        short_names=("llmisvc",),
    ),
    CrdSpec(
        "llmisvcconfig",
        SERVING_GROUP,
        "v1alpha2",
        "LLMInferenceServiceConfig",
        "llminferenceserviceconfigs",
        short_names=("llmisvcconfig",),
    ),
    CrdSpec(
        "gateway",
        GATEWAY_GROUP,
        "v1",
        "Gateway",
        "gateways",
        short_names=("gtw",),
        printer_columns=(("Class", ".spec.gatewayClassName"),),
    ),
    CrdSpec("httproute", GATEWAY_GROUP, "v1", "HTTPRoute", "httproutes"),
    CrdSpec(
        "gatewayclass",
        GATEWAY_GROUP,
        "v1",
        "GatewayClass",
        "gatewayclasses",
        namespaced=False,
        short_names=("gc",),
    ),
    CrdSpec("pool-v1", POOL_V1_GROUP, "v1", "InferencePool", "inferencepools", short_names=("infpool",)),
    CrdSpec("pool-v1alpha2", POOL_V1ALPHA2_GROUP, "v1alpha2", "InferencePool", "inferencepools"),
)

BUNDLES: dict[str, tuple[str, ...]] = {
    "gateway-api": ("gateway", "httproute", "gatewayclass"),
    "pools": ("pool-v1", "pool-v1alpha2"),
}


def manifest(spec: CrdSpec) -> dict[str, Any]:
    """A ``CustomResourceDefinition`` for ``spec``: open schema (unknown fields kept), status subresource."""
    version: dict[str, Any] = {
        "name": spec.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        "subresources": {"status": {}},
    }
    if spec.printer_columns:
        columns = [{"name": n, "type": "string", "jsonPath": p} for n, p in spec.printer_columns]
        version["additionalPrinterColumns"] = [
            *columns,
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]
    names: dict[str, Any] = {
        "plural": spec.plural,
        "singular": spec.kind.lower(),
        "kind": spec.kind,
        "listKind": f"{spec.kind}List",
    }
    if spec.short_names:
        names["shortNames"] = list(spec.short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": spec.name},
        "spec": {
            "group": spec.group,
            "names": names,
            "scope": "Namespaced" if spec.namespaced else "Cluster",
            "versions": [version],
        },
    }


def select(selection: str | Iterable[str]) -> list[CrdSpec]:
    """The CRDs a selection names, in declaration order; ValueError for an unknown name."""
    words = selection.split(",") if isinstance(selection, str) else list(selection)
    words = [w.strip() for w in words if w.strip()]
    if words in (["all"], ["none"]) or not words:
        return list(PROJECT_CRDS) if words == ["all"] else []
    keys: set[str] = set()
    by_name = {s.name: s.key for s in PROJECT_CRDS} | {s.key: s.key for s in PROJECT_CRDS}
    for word in words:
        if word in BUNDLES:
            keys.update(BUNDLES[word])
        elif word in by_name:
            keys.add(by_name[word])
        else:
            known = sorted([*by_name, *BUNDLES, "all", "none"])
            raise ValueError(f"unknown CRD {word!r}; known: {', '.join(known)}")
    return [s for s in PROJECT_CRDS if s.key in keys]


def manifests(selection: str | Iterable[str] = "all") -> list[dict[str, Any]]:
    return [manifest(spec) for spec in select(selection)]
