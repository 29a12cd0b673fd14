"""What a request URL names: verb, group/version, resource, namespace, name, subresource.

Parsing follows kube-apiserver's RequestInfoFactory, including its one quirk: under
``/api/v1/namespaces/<ns>/`` the words ``status`` and ``finalize`` are subresources of the namespace,
anything else is a resource inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True)
class RequestInfo:
    verb: str
    path: str
    is_resource: bool = False
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str | None = None
    name: str = ""

    @property
    def is_write(self) -> bool:
        return self.verb in WRITE_VERBS


def _verb(method: str, name: str, watch: bool) -> str:
    if method in ("GET", "HEAD"):
        return "get" if name else ("watch" if watch else "list")
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return method.lower()


def parse(method: str, path: str, watch: bool) -> RequestInfo:
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return RequestInfo(verb=method.lower(), path=path)
    if not rest:
        return RequestInfo(verb=method.lower(), path=path)
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
        else:
            namespace = None  # /api/v1/namespaces/<name>[/status]: the Namespace object itself
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3:
        return RequestInfo(verb=method.lower(), path=path)
    return RequestInfo(
        verb=_verb(method, name, watch),
        path=path,
        is_resource=True,
        group=group,
        version=version,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )
