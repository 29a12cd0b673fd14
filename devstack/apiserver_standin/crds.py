"""The CustomResourceDefinitions this project uses -- the real ones, vendored -- and a selection syntax.

The manifests are the upstream YAML files in ``vendored_crds/`` (their sources, versions and licences
are recorded in ``vendored_crds/README.md``), so their schemas, CEL rules, printer columns and short
names are exactly what a cluster with KServe and Gateway API installed would serve.

A selection is ``"all"``, ``"none"``, or names separated by commas: a short key (``llmisvc``,
``llmisvcconfig``, ``gateway``, ``httproute``, ``gatewayclass``, ``pool-v1``, ``pool-v1alpha2``), a
bundle (``gateway-api``, ``pools``) or a full CRD name such as ``httproutes.gateway.networking.k8s.io``.
Being able to install only some of them is what lets product tests exercise "CRD missing".
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SERVING_GROUP = "serving.kserve.io"
GATEWAY_GROUP = "gateway.networking.k8s.io"
POOL_V1_GROUP = "inference.networking.k8s.io"
POOL_V1ALPHA2_GROUP = "inference.networking.x-k8s.io"

VENDORED_DIR = Path(__file__).with_name("vendored_crds")


@dataclass(frozen=True)
class CrdSpec:
    key: str
    group: str
    plural: str

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def path(self) -> Path:
        return VENDORED_DIR / f"{self.group}_{self.plural}.yaml"


PROJECT_CRDS: tuple[CrdSpec, ...] = (
    CrdSpec("llmisvc", SERVING_GROUP, "llminferenceservices"),
    CrdSpec("llmisvcconfig", SERVING_GROUP, "llminferenceserviceconfigs"),
    CrdSpec("gateway", GATEWAY_GROUP, "gateways"),
    CrdSpec("httproute", GATEWAY_GROUP, "httproutes"),
    CrdSpec("gatewayclass", GATEWAY_GROUP, "gatewayclasses"),
    CrdSpec("pool-v1", POOL_V1_GROUP, "inferencepools"),
    CrdSpec("pool-v1alpha2", POOL_V1ALPHA2_GROUP, "inferencepools"),
)

BUNDLES: dict[str, tuple[str, ...]] = {
    "gateway-api": ("gateway", "httproute", "gatewayclass"),
    "pools": ("pool-v1", "pool-v1alpha2"),
    "kserve": ("llmisvc", "llmisvcconfig"),
}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llmisvc-router" / "crds"


@functools.cache
def _load(path: Path) -> dict[str, Any]:
    """The CRD in ``path``, parsed once per process and cached as JSON across processes.

    The KServe files are megabytes of YAML (seconds to parse); JSON of the same loads fifty times
    faster, so every stand-in process after the first starts at once. The cache is keyed by the
    file's hash and only ever an optimisation: any failure to read or write it is ignored.
    """
    raw = path.read_bytes()
    cache = _cache_dir() / f"{path.stem}-{hashlib.sha256(raw).hexdigest()[:20]}.json"
    try:
        return dict(json.loads(cache.read_bytes()))
    except (OSError, ValueError):
        pass
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs = [d for d in yaml.load_all(raw, Loader=loader) if d]
    if len(docs) != 1 or docs[0].get("kind") != "CustomResourceDefinition":
        raise ValueError(f"{path}: expected exactly one CustomResourceDefinition")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(docs[0]))
        os.replace(partial, cache)  # atomic: a concurrent reader sees all of it or nothing
    except OSError:
        pass
    return dict(docs[0])


def manifest(spec: CrdSpec) -> dict[str, Any]:
    """The vendored ``CustomResourceDefinition`` for ``spec``.

    Top level and metadata are fresh copies; ``spec`` is shared by every caller in the process (it is
    megabytes): treat it as read-only, or ``copy.deepcopy`` it first.
    """
    loaded = _load(spec.path)
    return {**loaded, "metadata": copy.deepcopy(loaded["metadata"])}


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
