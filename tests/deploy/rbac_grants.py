"""What a ServiceAccount is granted by RBAC objects, and what the code asked for, both as
(scope, apiGroup, resource, verb) with scope a namespace or ``*`` (cluster-wide), so the two RBAC shapes
(ClusterRoles for all namespaces; Roles per managed namespace) are compared with the calls the same way.

The real authorizer decides what is allowed (the tests count its 403s); this reading of the same objects
is what says which grants no call used, the other half of least privilege. Resolution follows
Kubernetes: a ClusterRoleBinding grants its ClusterRole everywhere; a RoleBinding grants its Role (or a
ClusterRole) in the binding's namespace only. A call is allowed when a grant of the same group, resource
and verb has its scope or ``*``; a cluster-scoped call (no namespace in the path, which includes a list
or watch across all namespaces) needs a ``*`` grant.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from llmisvc_devstack.controlplane import identity
from llmisvc_devstack.proxy import RequestCounter

ALL = "*"
Grant = tuple[str, str, str, str]  # (namespace or "*", apiGroup, resource[/subresource], verb)
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection"}


def render(path: str) -> list[dict[str, Any]]:
    """``kubectl kustomize`` of a directory of the repository."""
    return identity.render(path)


def _rules(role: dict[str, Any], scope: str) -> set[Grant]:
    return {
        (scope, g, r, v)
        for rule in role.get("rules") or []
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }


def grants(objects: Iterable[dict[str, Any]], service_account: str) -> set[Grant]:
    """Everything the ServiceAccount ``llmisvc-router/<service_account>`` is granted."""
    objects = list(objects)
    by_name = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] in ("Role", "ClusterRole")
    }
    found: set[Grant] = set()
    for binding in objects:
        if binding["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        subject = {"kind": "ServiceAccount", "name": service_account, "namespace": identity.ROUTER_NAMESPACE}
        if subject not in binding["subjects"]:
            continue
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace", "")
        role = by_name.get((ref["kind"], namespace if ref["kind"] == "Role" else "", ref["name"]))
        assert role is not None, f"{binding['kind']} {binding['metadata']['name']} refers to a missing role"
        found |= _rules(role, ALL if binding["kind"] == "ClusterRoleBinding" else namespace)
    return found


def calls(counter: RequestCounter, agent: str) -> set[Grant]:
    """The resource requests a user agent made through the proxy (discovery and /version are
    non-resource URLs every authenticated user may read)."""
    return {
        (r.namespace or ALL, r.group, f"{r.resource}/{r.subresource}".rstrip("/"), r.verb)
        for r in counter.records(user_agent=agent)
        if r.resource
    }


def allowed(granted: set[Grant], call: Grant) -> bool:
    scope, group, resource, verb = call
    return (ALL, group, resource, verb) in granted or (scope != ALL and call in granted)


def unused(granted: set[Grant], made: set[Grant]) -> set[Grant]:
    """Grants no call needed: a namespaced grant no call in its namespace used, a cluster-wide grant whose
    calls (if any) a namespaced grant would also have allowed."""
    namespaced = {g for g in granted if g[0] != ALL}
    needed = {g for g in granted if g[0] != ALL and g in made}
    needed |= {
        (ALL, *call[1:]) for call in made if not allowed(namespaced, call) and (ALL, *call[1:]) in granted
    }
    return granted - needed
