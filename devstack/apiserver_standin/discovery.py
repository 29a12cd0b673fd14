"""Discovery documents (``/version``, ``/api``, ``/apis``, ...) built from the registry on every request.

They are computed, not cached, so a CRD installed or removed at run time shows up at once. Only the
legacy (non-aggregated) discovery format is served: clients that ask for aggregated discovery fall back
to it when the answer's Content-Type is plain ``application/json``.
"""

from __future__ import annotations

from typing import Any

from apiserver_standin.registry import ALL_VERBS, Registry, ResourceInfo

VERSION_INFO: dict[str, str] = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-standin",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def core_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_doc(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def group_list(registry: Registry) -> dict[str, Any]:
    groups = registry.group_versions()
    docs = [_group_doc(name, versions) for name, versions in sorted(groups.items()) if name]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": docs}


def group(registry: Registry, name: str) -> dict[str, Any] | None:
    versions = registry.group_versions().get(name)
    if not name or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(name, versions)}


def _resource_entries(info: ResourceInfo) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": list(ALL_VERBS),
    }
    if info.short_names:
        main["shortNames"] = list(info.short_names)
    if info.categories:
        main["categories"] = list(info.categories)
    entries = [main]
    if info.has_status:
        entries.append(
            {
                "name": f"{info.plural}/status",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": ["get", "patch", "update"],
            }
        )
    return entries


def resource_list(registry: Registry, group_name: str, version: str) -> dict[str, Any] | None:
    infos = [i for i in registry.all() if i.group == group_name and i.version == version]
    if not infos:
        return None
    group_version = f"{group_name}/{version}" if group_name else version
    resources = [entry for info in sorted(infos, key=lambda i: i.plural) for entry in _resource_entries(info)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }
