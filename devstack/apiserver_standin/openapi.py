"""OpenAPI v3 (``/openapi/v3`` and one document per group/version), from the installed CRDs.

A custom resource's schema is its CRD version's ``openAPIV3Schema`` (descriptions included), with
``metadata`` pointing at ``ObjectMeta`` and the ``x-kubernetes-group-version-kind`` extension by
which kubectl finds it: ``kubectl explain llmisvc.spec.router`` walks it. Built-in kinds are
served as open objects (``x-kubernetes-preserve-unknown-fields``) -- kubectl knows their types.

kubectl also reads OpenAPI before writing, to learn whether the server validates fields itself (a
``fieldValidation`` query parameter on the PATCH operation). It does, so kubectl skips client-side
schema validation and sends ``fieldValidation=Strict``. Custom resources' PATCH bodies list no
strategic-merge content type, so kubectl sends them JSON merge patches. ``/openapi/v2`` stays 404,
which kubectl tolerates once v3 answers.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from apiserver_standin.registry import Registry, ResourceInfo

_WRITE_PARAMS = ("fieldValidation", "fieldManager", "dryRun", "force")
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_META_SCHEMA = {
    "description": "ObjectMeta is metadata that all persisted resources must have, which includes all "
    "objects users must create.",
    "type": "object",
    "x-kubernetes-preserve-unknown-fields": True,
}


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


def kind_schema(info: ResourceInfo) -> dict[str, Any]:
    """The published schema of one kind: the CRD's, or an open object for a built-in."""
    gvk = {"group": info.group, "version": info.version, "kind": info.kind}
    if info.schema is None:
        return {
            "type": "object",
            "x-kubernetes-group-version-kind": [gvk],
            "x-kubernetes-preserve-unknown-fields": True,
        }
    properties = dict(info.schema.get("properties") or {})
    properties["metadata"] = {
        "description": "Standard object's metadata. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
        "allOf": [{"$ref": f"#/components/schemas/{_OBJECT_META}"}],
    }
    return {**info.schema, "properties": properties, "x-kubernetes-group-version-kind": [gvk]}


# (group, version, what was installed) -> (the infos, kept so the schema ids stay unique; doc; hash).
# The KServe schemas are megabytes: build and hash each document once, not on every kubectl call.
_CACHE: dict[tuple[Any, ...], tuple[list[ResourceInfo], dict[str, Any], str]] = {}


def _cached(registry: Registry, group: str, version: str) -> tuple[dict[str, Any], str] | None:
    infos = sorted(
        (i for i in registry.all() if i.group == group and i.version == version), key=lambda i: i.plural
    )
    if not infos:
        return None
    key = (group, version, *((i, id(i.schema)) for i in infos))
    if key not in _CACHE:
        if len(_CACHE) > 256:
            _CACHE.clear()
        doc = _build(infos)
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
        _CACHE[key] = (infos, doc, digest)
    _, doc, digest = _CACHE[key]
    return doc, digest


def _build(infos: list[ResourceInfo]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {_OBJECT_META: _META_SCHEMA}
    for info in infos:
        paths.update(_paths(info))
        schemas[_schema_name(info)] = kind_schema(info)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes API server stand-in", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def group_version_doc(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    cached = _cached(registry, group, version)
    return cached[0] if cached else None


def root_doc(registry: Registry) -> dict[str, Any]:
    """``/openapi/v3``: one entry per group/version, its URL carrying a content hash (clients cache by it)."""
    paths = {}
    for group, versions in sorted(registry.group_versions().items()):
        for version in versions:
            cached = _cached(registry, group, version)
            if cached is None:
                continue
            key = _path_key(group, version)
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={cached[1]}"}
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
