"""The installed resources: built-ins plus whatever CRDs are present, and the discovery documents.

The registry is what makes "CRD missing" testable: a resource that is not installed here is answered
404 at every verb and is absent from ``/apis``, exactly as on a real cluster. Creating or deleting a
``CustomResourceDefinition`` object calls :meth:`Registry.install_crd` / :meth:`Registry.remove_crd`.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from apiserver_standin.errors import invalid

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
GroupResource = tuple[str, str]


@dataclass(frozen=True)
class ResourceInfo:
    """One served resource at one group/version."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    has_status: bool = False
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    # Built-ins such as ConfigMap accept a PUT without resourceVersion; custom resources do not.
    unconditional_update: bool = False
    # Custom resources answer DELETE with the object; most built-ins with a Status.
    returns_deleted_object: bool = True
    crd_name: str = ""
    printer_columns: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    # A CRD version's openAPIV3Schema: writes are pruned, defaulted and validated against it.
    schema: dict[str, Any] | None = field(default=None, compare=False)
    # The scale subresource: JSON paths of spec replicas, status replicas and the label selector.
    scale: tuple[str, str, str] | None = None
    # Another API's objects seen through this one (events.k8s.io Events are stored as core Events).
    stored_as: GroupResource | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> GroupResource:
        """Where the objects live in the store (shared by every API that serves them)."""
        return self.stored_as or (self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"


def _builtin(group: str, version: str, kind: str, plural: str, **kw: Any) -> ResourceInfo:
    kw.setdefault("unconditional_update", True)
    kw.setdefault("returns_deleted_object", False)
    return ResourceInfo(group, version, kind, plural, singular=kind.lower(), **kw)


BUILTINS: tuple[ResourceInfo, ...] = (
    _builtin("", "v1", "Namespace", "namespaces", namespaced=False, has_status=True, short_names=("ns",)),
    _builtin("", "v1", "Service", "services", has_status=True, short_names=("svc",), categories=("all",)),
    _builtin("", "v1", "ConfigMap", "configmaps", short_names=("cm",)),
    _builtin("", "v1", "Secret", "secrets"),
    _builtin("", "v1", "ServiceAccount", "serviceaccounts", short_names=("sa",)),
    _builtin("", "v1", "Event", "events", short_names=("ev",)),
    _builtin("events.k8s.io", "v1", "Event", "events", stored_as=("", "events")),
    _builtin("", "v1", "Pod", "pods", has_status=True, short_names=("po",), categories=("all",)),
    _builtin("", "v1", "Endpoints", "endpoints", short_names=("ep",)),
    _builtin(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        has_status=True,
        short_names=("deploy",),
        categories=("all",),
        scale=(".spec.replicas", ".status.replicas", ".spec.selector"),
    ),
    _builtin("coordination.k8s.io", "v1", "Lease", "leases"),
    _builtin(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        namespaced=False,
        has_status=True,
        short_names=("crd", "crds"),
        returns_deleted_object=True,
    ),
)

_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' version order: GA before beta before alpha, higher numbers first (sort ascending)."""
    match = _VERSION_RE.match(version)
    if not match:
        return (3, 0, 0)
    major, level, minor = match.group(1), match.group(2), match.group(3)
    rank = {None: 0, "beta": 1, "alpha": 2}[level]
    return (rank, -int(major), -int(minor or 0))


def resources_from_crd(crd: dict[str, Any]) -> list[ResourceInfo]:
    """The served versions of a CRD object; 422 if it is malformed (name must be ``<plural>.<group>``)."""
    meta_name = str(crd.get("metadata", {}).get("name", ""))
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural, kind = str(spec.get("group", "")), str(names.get("plural", "")), str(names.get("kind", ""))
    causes: list[tuple[str, str]] = []
    if not group or not plural or not kind:
        causes.append(("spec", "group, names.plural and names.kind are required"))
    elif meta_name != f"{plural}.{group}":
        causes.append(("metadata.name", f'must be spec.names.plural+"."+spec.group ({plural}.{group})'))
    versions = [v for v in spec.get("versions") or [] if v.get("served", True)]
    if not versions and not causes:
        causes.append(("spec.versions", "must have at least one served version"))
    if causes:
        raise invalid("CustomResourceDefinition", "apiextensions.k8s.io", meta_name, causes)
    return [
        ResourceInfo(
            group=group,
            version=str(v["name"]),
            kind=kind,
            plural=plural,
            namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            has_status="status" in (v.get("subresources") or {}),
            singular=str(names.get("singular") or kind.lower()),
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            crd_name=meta_name,
            printer_columns=tuple(v.get("additionalPrinterColumns") or ()),
            schema=(v.get("schema") or {}).get("openAPIV3Schema"),
            scale=_scale_paths(v),
        )
        for v in versions
    ]


def _scale_paths(version: dict[str, Any]) -> tuple[str, str, str] | None:
    scale = (version.get("subresources") or {}).get("scale")
    if not isinstance(scale, dict):
        return None
    paths = ("specReplicasPath", "statusReplicasPath", "labelSelectorPath")
    return (str(scale.get(paths[0], "")), str(scale.get(paths[1], "")), str(scale.get(paths[2]) or ""))


class Registry:
    """Thread-safe map of (group, version, plural) to :class:`ResourceInfo`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_gvr: dict[tuple[str, str, str], ResourceInfo] = {}
        for info in BUILTINS:
            self._by_gvr[(info.group, info.version, info.plural)] = info

    def lookup(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        with self._lock:
            return self._by_gvr.get((group, version, plural))

    def install_crd(self, crd: dict[str, Any]) -> list[ResourceInfo]:
        infos = resources_from_crd(crd)
        with self._lock:
            self._drop_crd(str(crd["metadata"]["name"]))
            for info in infos:
                self._by_gvr[(info.group, info.version, info.plural)] = info
        return infos

    def remove_crd(self, crd_name: str) -> None:
        with self._lock:
            self._drop_crd(crd_name)

    def _drop_crd(self, crd_name: str) -> None:
        for key in [k for k, info in self._by_gvr.items() if info.crd_name == crd_name]:
            del self._by_gvr[key]

    def all(self) -> list[ResourceInfo]:
        with self._lock:
            return list(self._by_gvr.values())

    def group_versions(self) -> dict[str, list[str]]:
        """Group name to its versions, preferred first."""
        groups: dict[str, set[str]] = {}
        for info in self.all():
            groups.setdefault(info.group, set()).add(info.version)
        return {g: sorted(vs, key=version_priority) for g, vs in groups.items()}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def with_crd_status(crd: dict[str, Any]) -> dict[str, Any]:
    """``crd`` with the status the apiextensions controller gives an accepted, established CRD."""
    spec = crd.get("spec") or {}
    condition = {"status": "True", "lastTransitionTime": _now(), "message": "", "reason": ""}
    status = {
        "acceptedNames": spec.get("names") or {},
        "storedVersions": [v.get("name") for v in spec.get("versions") or [] if v.get("storage")],
        "conditions": [
            {**condition, "type": "NamesAccepted", "reason": "NoConflicts", "message": "no conflicts found"},
            {
                **condition,
                "type": "Established",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        ],
    }
    old = crd.get("status") or {}
    if {**old, "conditions": None} == {**status, "conditions": None} and old.get("conditions"):
        return crd  # keep the original transition times
    return {**crd, "status": status}
