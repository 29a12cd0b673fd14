"""What a request URL names: verb, group/version, resource, namespace, name, subresource.

The proxy matches fault rules and counts requests by these fields, so they must be the ones the real
server reports. Parsing follows kube-apiserver's RequestInfoFactory: the ``watch`` verb from
``?watch=true`` (or the deprecated ``/watch/`` path prefix), ``list`` and ``deletecollection`` for
requests without a name, and its one quirk: under ``/api/v1/namespaces/<ns>/`` the words ``status``
and ``finalize`` are subresources of the namespace, anything else is a resource inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_TRUE = frozenset({"1", "t", "true"})  # what Go's strconv.ParseBool reads as true, lower-cased


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
    dry_run: bool = False  # ``?dryRun=All``: checked by the API server, stored nowhere

    @property
    def is_write(self) -> bool:
        return self.verb in WRITE_VERBS


def is_watch_query(value: str) -> bool:
    """Whether a ``watch`` query parameter asks for a watch."""
    return value.lower() in _TRUE


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


def parse(method: str, path: str, watch: bool, *, dry_run: bool = False) -> RequestInfo:
    """``path`` is the URL's unquoted path (no query); ``watch`` and ``dry_run`` what its ``watch`` and
    ``dryRun`` parameters say."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return RequestInfo(verb=method.lower(), path=path)
    watch_prefix = rest[:1] == ["watch"] and method in ("GET", "HEAD")
    if watch_prefix:
        rest = rest[1:]  # /api/v1/watch/...: the verb is watch, named object or not
    if not rest:
        return RequestInfo(verb=method.lower(), path=path)
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
        else:
            namespace = None  # /api/v1/namespaces/<name>[/status]: the Namespace object itself
    if len(rest) > 3:
        return RequestInfo(verb=method.lower(), path=path)
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return RequestInfo(
        verb="watch" if watch_prefix else _verb(method, name, watch),
        path=path,
        is_resource=True,
        group=group,
        version=version,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
        dry_run=dry_run,
    )
