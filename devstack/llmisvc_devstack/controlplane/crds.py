"""The CustomResourceDefinitions this project uses -- the real ones, vendored -- a selection syntax, and
installing or removing them on a real API server.

The manifests are the upstream YAML files in ``vendored_crds/`` (their sources, versions and licences
are recorded in ``vendored_crds/README.md``), so their schemas, CEL rules, printer columns and short
names are exactly what a cluster with KServe and Gateway API installed would serve.

A selection is ``"all"``, ``"none"``, or names separated by commas: a short key (``llmisvc``,
``llmisvcconfig``, ``gateway``, ``httproute``, ``gatewayclass``, ``pool-v1``, ``pool-v1alpha2``), a
bundle (``gateway-api``, ``pools``) or a full CRD name such as ``httproutes.gateway.networking.k8s.io``.
Being able to install only some of them is what lets product tests exercise "CRD missing". A CRD is
usable once its ``Established`` condition is True; removal waits until the CRD object is gone, which
kube-apiserver allows only after every object of it is deleted.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

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
    faster, so every process after the first installs them at once. The cache is keyed by the
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


def install(api: k8s.ApiextensionsV1Api, selection: str | Iterable[str], timeout: float) -> list[str]:
    """Create each selected CRD that is absent; wait until all selected are Established. Their names."""
    specs = select(selection)
    for spec in specs:
        try:
            api.create_custom_resource_definition(cast(Any, manifest(spec)))  # a dict body is sent as is
        except ApiException as err:
            if err.status != 409:
                raise
    names = [spec.name for spec in specs]
    _wait(api, names, established=True, timeout=timeout)
    return names


def remove(api: k8s.ApiextensionsV1Api, selection: str | Iterable[str], timeout: float) -> list[str]:
    """Delete each selected CRD; wait until none of them exists any more. Their names."""
    names = [spec.name for spec in select(selection)]
    for name in names:
        try:
            api.delete_custom_resource_definition(name)
        except ApiException as err:
            if err.status != 404:
                raise
    _wait(api, names, established=False, timeout=timeout)
    return names


def _is_established(api: k8s.ApiextensionsV1Api, name: str) -> bool:
    status = api.read_custom_resource_definition(name).status
    conditions = (status.conditions if status is not None else None) or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


def _exists(api: k8s.ApiextensionsV1Api, name: str) -> bool:
    try:
        api.read_custom_resource_definition(name)
    except ApiException as err:
        if err.status == 404:
            return False
        raise
    return True


def _wait(api: k8s.ApiextensionsV1Api, names: list[str], established: bool, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pending = list(names)
    while pending:
        pending = [
            n for n in pending if not (_is_established(api, n) if established else not _exists(api, n))
        ]
        if not pending:
            return
        if time.monotonic() > deadline:
            state = "Established" if established else "deleted"
            raise TimeoutError(f"CRDs not {state} after {timeout:.0f}s: {', '.join(pending)}")
        time.sleep(0.1)
