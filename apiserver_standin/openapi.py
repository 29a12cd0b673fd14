"""A minimal OpenAPI v3 (``/openapi/v3``): just enough for ``kubectl apply`` and ``kubectl create``.

kubectl downloads OpenAPI before writing to learn whether the server validates fields itself (a
``fieldValidation`` query parameter on the resource's PATCH operation). It does here -- unknown fields
are kept, as with ``x-kubernetes-preserve-unknown-fields`` -- so kubectl skips client-side schema
validation. PATCH bodies list no strategic-merge content type, so kubectl builds strategic patches
for built-in kinds from its compiled-in types and JSON merge patches for custom resources.
``/openapi/v2`` stays 404, which kubectl tolerates once v3 answers.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from apiserver_standin.registry import Registry, ResourceInfo

_WRITE_PARAMS = ("fieldValidation", "fieldManager", "dryRun", "force")
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")


def _path_key(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _schema_name(info: ResourceInfo) -> str:
    reverse = ".".join(reversed(info.group.split("."))) if info.group else "io.k8s.api.core"
    return f"{reverse}.{info.version}.{info.kind}"


def _operation(
    info: ResourceInfo, action: str, params: tuple[str, ...] = (), body_types: tuple[str, ...] = ()
) -> Any:
    schema_ref = {"$ref": f"#/components/schemas/{_schema_name(info)}"}
    operation: dict[str, Any] = {
        "operationId": f"{action}{info.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": info.group, "version": info.version, "kind": info.kind},
        "parameters": [{"name": p, "in": "query", "schema": {"type": "string"}} for p in params],
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": schema_ref}}}},
    }
    if body_types:
        operation["requestBody"] = {"content": {t: {"schema": schema_ref} for t in body_types}}
    return operation


def _paths(info: ResourceInfo) -> dict[str, Any]:
    prefix = f"/{_path_key(info.group, info.version)}"
    collection = (
        f"{prefix}/namespaces/{{namespace}}/{info.plural}" if info.namespaced else f"{prefix}/{info.plural}"
    )
    item = {
        "get": _operation(info, "get"),
        "put": _operation(info, "put", _WRITE_PARAMS, ("application/json",)),
        "patch": _operation(info, "patch", _WRITE_PARAMS, _PATCH_TYPES),
        "delete": _operation(info, "delete"),
    }
    paths = {
        collection: {
            "get": _operation(info, "list"),
            "post": _operation(info, "post", _WRITE_PARAMS, ("application/json",)),
        },
        f"{collection}/{{name}}": item,
    }
    if info.has_status:
        paths[f"{collection}/{{name}}/status"] = {
            "patch": _operation(info, "patch", _WRITE_PARAMS, _PATCH_TYPES)
        }
    return paths


def group_version_doc(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    infos = [i for i in registry.all() if i.group == group and i.version == version]
    if not infos:
        return None
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for info in sorted(infos, key=lambda i: i.plural):
        paths.update(_paths(info))
        gvk = {"group": info.group, "version": info.version, "kind": info.kind}
        schemas[_schema_name(info)] = {
            "type": "object",
            "x-kubernetes-group-version-kind": [gvk],
            "x-kubernetes-preserve-unknown-fields": True,
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes API server stand-in", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def root_doc(registry: Registry) -> dict[str, Any]:
    """``/openapi/v3``: one entry per group/version, its URL carrying a content hash (clients cache by it)."""
    paths = {}
    for group, versions in sorted(registry.group_versions().items()):
        for version in versions:
            doc = group_version_doc(registry, group, version)
            digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
            key = _path_key(group, version)
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def document(registry: Registry, path: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document for a URL path under ``/openapi/v3``, or None."""
    parts = [p for p in path.split("/") if p][2:]
    if not parts:
        return root_doc(registry)
    if len(parts) == 2 and parts[0] == "api":
        return group_version_doc(registry, "", parts[1])
    if len(parts) == 3 and parts[0] == "apis":
        return group_version_doc(registry, parts[1], parts[2])
    return None
