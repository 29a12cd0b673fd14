"""Resource verbs: turns a parsed request into a store call and the answer a real server would give.

Watch is served by :mod:`apiserver_standin.watch_stream`; this module covers get, list, create,
update, patch (merge, JSON, strategic, apply), delete and deletecollection, with ``dryRun=All``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from apiserver_standin import event_versions, protobuf_bodies, scale, schema
from apiserver_standin import objects as o
from apiserver_standin.apply import server_side_apply
from apiserver_standin.errors import ApiError, bad_request, resource_not_found, unsupported_media_type
from apiserver_standin.managed_fields import manager_of
from apiserver_standin.patches import json_patch, merge_patch, strategic_merge
from apiserver_standin.registry import Registry, ResourceInfo
from apiserver_standin.requestinfo import RequestInfo
from apiserver_standin.selectors import combine, field_predicate, label_predicate
from apiserver_standin.store import Store, Transform


class _ApplyLoader(yaml.SafeLoader):
    """Safe YAML that keeps timestamps as strings, as the API server's YAML-to-JSON conversion does."""


_ApplyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass
class Response:
    code: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ApiRequest:
    info: RequestInfo
    query: dict[str, str]
    content_type: str
    raw_body: bytes
    user_agent: str = ""

    @property
    def manager(self) -> str:
        """The field manager the write is recorded under (``managedFields``)."""
        return manager_of(self.query.get("fieldManager", ""), self.user_agent)

    def json(self) -> Any:
        if not self.raw_body:
            return None
        if self.content_type == protobuf_bodies.CONTENT_TYPE:
            # kubectl sends built-in kinds so, and does not retry with JSON after a 415.
            return protobuf_bodies.decode(self.raw_body)
        try:
            return json.loads(self.raw_body)
        except ValueError as exc:
            if self.content_type != "application/apply-patch+yaml":
                raise bad_request(f"the request body is not valid JSON: {exc}") from exc
        try:  # apply configurations may be YAML (JSON, tried first, is the common case)
            return yaml.load(self.raw_body, Loader=_ApplyLoader)  # a SafeLoader subclass: safe
        except yaml.YAMLError as exc:
            raise bad_request(f"the request body is not valid YAML: {exc}") from exc

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("true", "1")

    @property
    def dry_run(self) -> bool:
        value = self.query.get("dryRun")
        if value not in (None, "", "All"):
            raise bad_request(f'unsupported dry run value "{value}": only "All" is supported')
        return value == "All"


def resolve(registry: Registry, info: RequestInfo) -> ResourceInfo:
    """The installed resource a request names; 404 if it is not installed or the URL is malformed."""
    resource = registry.lookup(info.group, info.version, info.resource)
    if resource is None:
        raise resource_not_found(info.path)
    if not resource.namespaced and info.namespace is not None:
        raise resource_not_found(info.path)
    if resource.namespaced and info.namespace is None and (info.name or info.verb == "create"):
        raise resource_not_found(info.path)
    known = {"status": resource.has_status, "scale": resource.scale is not None}
    if info.subresource and not known.get(info.subresource):
        raise resource_not_found(info.path)
    return resource


def predicate_of(query: dict[str, str], resource: ResourceInfo) -> Any:
    fields = field_predicate(query.get("fieldSelector"), resource.group, resource.plural)
    return combine(label_predicate(query.get("labelSelector")), fields)


def check_fields(resource: ResourceInfo, req: ApiRequest, body: Any) -> dict[str, str]:
    """``fieldValidation``: Strict refuses fields the schema does not declare; Warn (the default) warns.

    Returns the response headers to add (a ``Warning`` per unknown field).
    """
    mode = req.query.get("fieldValidation") or "Warn"
    if mode not in ("Ignore", "Warn", "Strict"):
        raise bad_request(
            f'fieldValidation parameter unsupported: "{mode}"; valid options: Ignore, Warn, Strict'
        )
    if resource.schema is None or mode == "Ignore" or not isinstance(body, dict):
        return {}
    unknown = schema.unknown_fields(body, resource.schema, root=True)
    if not unknown:
        return {}
    if mode == "Strict":
        listed = ", ".join(f'unknown field "{path}"' for path in unknown)
        raise bad_request(
            f'{resource.kind} in version "{resource.version}" cannot be handled as a {resource.kind}: '
            f"strict decoding error: {listed}"
        )
    return {"Warning": ", ".join(f'299 - "unknown field \\"{path}\\""' for path in unknown)}


def handle(store: Store, resource: ResourceInfo, req: ApiRequest) -> Response:
    info = req.info
    namespace = info.namespace or ""
    verb = info.verb
    if info.subresource == "scale":
        return _scale(store, resource, req)
    if verb == "get":
        return Response(200, store.get(resource, namespace, info.name))
    if verb == "list":
        return _list(store, resource, req)
    if verb == "create":
        body = req.json()
        warnings = check_fields(resource, req, body)
        body = event_versions.to_storage(resource.group, resource.plural, body)
        return Response(201, store.create(resource, namespace, body, req.dry_run, req.manager), warnings)
    if verb == "update":
        body = req.json()
        warnings = check_fields(resource, req, body)
        body = event_versions.to_storage(resource.group, resource.plural, body)
        obj = store.update(
            resource, namespace, info.name, body, info.subresource, dry_run=req.dry_run, manager=req.manager
        )
        return Response(200, obj, warnings)
    if verb == "patch":
        return _patch(store, resource, req)
    if verb == "delete":
        return _delete(store, resource, req)
    if verb == "deletecollection":
        policy = _delete_options(req).get("propagationPolicy")
        items = store.delete_collection(
            resource,
            info.namespace,
            predicate_of(req.query, resource),
            dry_run=req.dry_run,
            propagation=policy,
        )
        return Response(200, _list_body(resource, items, store.current_rv()))
    raise ApiError(405, f"verb {verb} is not supported")


def _list_body(resource: ResourceInfo, items: list[o.Obj], rv: int) -> dict[str, Any]:
    return {
        "kind": resource.list_kind,
        "apiVersion": resource.api_version,
        "metadata": {"resourceVersion": str(rv)},
        "items": items,
    }


def _list(store: Store, resource: ResourceInfo, req: ApiRequest) -> Response:
    try:
        limit = int(req.query.get("limit") or 0)
    except ValueError as exc:
        raise bad_request(f"invalid limit: {req.query.get('limit')}") from exc
    page = store.list(
        resource, req.info.namespace, predicate_of(req.query, resource), limit, req.query.get("continue")
    )
    body = _list_body(resource, page.items, page.resource_version)
    if page.continue_token:
        body["metadata"].update({"continue": page.continue_token, "remainingItemCount": page.remaining})
    return Response(200, body)


JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def patch_types(resource: ResourceInfo) -> tuple[str, ...]:
    """The patch content types a resource accepts: no strategic merge for custom resources."""
    if resource.crd_name:
        return (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)
    return (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH)


def _transform(resource: ResourceInfo, req: ApiRequest) -> Transform:
    kind = req.content_type
    if kind not in patch_types(resource):
        raise unsupported_media_type(patch_types(resource))
    patch = req.json()
    if kind == "application/merge-patch+json":
        return lambda current: merge_patch(current or {}, patch)
    if kind == "application/json-patch+json":
        return lambda current: json_patch(current or {}, patch)
    if kind == "application/strategic-merge-patch+json":
        return lambda current: strategic_merge(current or {}, patch)
    if kind == "application/apply-patch+yaml":
        manager, force = req.query.get("fieldManager", ""), req.flag("force")
        rules = resource.schema

        def defaults(config: dict[str, Any]) -> dict[str, Any]:
            return dict(schema.normalize(config, rules, root=True)) if rules is not None else config

        return lambda current: server_side_apply(current, patch, manager, o.now(), force, defaults)
    raise unsupported_media_type(patch_types(resource))


def _patch(store: Store, resource: ResourceInfo, req: ApiRequest) -> Response:
    if req.raw_body.strip() in (b"", b"null"):
        raise bad_request("the body of the patch request is empty")
    patch_body = _transform(resource, req)

    def transform(current: o.Obj | None) -> o.Obj:
        # The patch applies to the object as this API serves it; the result is stored converted back.
        return event_versions.to_storage(resource.group, resource.plural, patch_body(current))  # type: ignore[no-any-return]

    info = req.info
    warnings = check_fields(resource, req, req.json()) if req.content_type != JSON_PATCH else {}
    apply = req.content_type == "application/apply-patch+yaml"
    obj, created = store.patch(
        resource,
        info.namespace or "",
        info.name,
        transform,
        subresource=info.subresource,
        dry_run=req.dry_run,
        create_if_missing=apply,
        owns_managed_fields=apply,
        manager=req.manager,
    )
    return Response(201 if created else 200, obj, warnings)


def _scale(store: Store, resource: ResourceInfo, req: ApiRequest) -> Response:
    info = req.info
    namespace = info.namespace or ""
    if info.verb == "get":
        return Response(200, scale.scale_of(resource, store.get(resource, namespace, info.name)))
    if info.verb == "update":
        body = req.json()
        change = scale.transform(resource, lambda _current: body)
    elif info.verb == "patch":
        if req.content_type == APPLY_PATCH:
            raise unsupported_media_type((JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH))
        patch_scale = _transform(resource, req)
        change = scale.transform(resource, patch_scale)
    else:
        raise ApiError(405, f"the server does not allow this method on the requested resource ({info.verb})")
    obj, _ = store.patch(resource, namespace, info.name, change, dry_run=req.dry_run)
    return Response(200, scale.scale_of(resource, obj))


def _delete_options(req: ApiRequest) -> dict[str, Any]:
    options = req.json() if req.raw_body.strip() else None
    options = options if isinstance(options, dict) else {}
    if "propagationPolicy" in req.query:
        options["propagationPolicy"] = req.query["propagationPolicy"]
    if options.get("orphanDependents") is True and "propagationPolicy" not in options:
        options["propagationPolicy"] = "Orphan"
    return options


def _delete(store: Store, resource: ResourceInfo, req: ApiRequest) -> Response:
    options = _delete_options(req)
    preconditions = options.get("preconditions") or {}
    dry_run = req.dry_run or "All" in (options.get("dryRun") or [])
    info = req.info
    obj, gone = store.delete(
        resource,
        info.namespace or "",
        info.name,
        uid=preconditions.get("uid"),
        resource_version=preconditions.get("resourceVersion"),
        propagation=options.get("propagationPolicy"),
        dry_run=dry_run,
    )
    if gone and not resource.returns_deleted_object:
        details: dict[str, Any] = {"name": info.name, "kind": resource.plural, "uid": o.meta(obj).get("uid")}
        if resource.group:
            details["group"] = resource.group
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }
        return Response(200, status)
    return Response(200, obj)
