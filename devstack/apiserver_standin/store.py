"""The object store: dictionary-indexed objects, resourceVersion, generation, status rules, watch log.

One lock (inside ``self.cond``) guards everything. Stored objects are immutable dicts: a write builds
a new dict, so readers and watch streams can serialise objects after releasing the lock.
Deletion (finalizers, propagation) lives in :mod:`apiserver_standin.deletion`, the ownerReference
cascade in :mod:`apiserver_standin.garbage_collector`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass

from apiserver_standin import admission
from apiserver_standin import objects as o
from apiserver_standin.errors import (
    already_exists,
    bad_request,
    forbidden,
    invalid,
    not_found,
    stale_conflict,
)
from apiserver_standin.garbage_collector import CollectingStore
from apiserver_standin.managed_fields import record_update
from apiserver_standin.registry import GroupResource, ResourceInfo, resources_from_crd, with_crd_status
from apiserver_standin.selectors import Predicate
from apiserver_standin.storebase import CRD_RESOURCE, NAMESPACES

Obj = o.Obj
Transform = Callable[[Obj | None], Obj]


@dataclass(frozen=True)
class ListPage:
    items: list[Obj]
    resource_version: int
    continue_token: str | None
    remaining: int


def _encode_continue(rv: int, namespace: str, name: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"rv": rv, "start": [namespace, name]}).encode()).decode()


def _decode_continue(token: str) -> tuple[str, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return str(data["start"][0]), str(data["start"][1])
    except (ValueError, KeyError, IndexError, TypeError, binascii.Error) as exc:
        raise bad_request(f"continue key is not valid: {exc}") from exc


class Store(CollectingStore):
    """Reads and writes; see :class:`StoreState` for the state and the locking rules."""

    # --- reads -----------------------------------------------------------------------------------

    def get(self, info: ResourceInfo, namespace: str, name: str) -> Obj:
        with self.cond:
            obj = self._lookup(info.group_resource, namespace, name)
        if obj is None:
            raise not_found(info.group, info.plural, name)
        return o.with_api_version(obj, info)

    def list(
        self,
        info: ResourceInfo,
        namespace: str | None,
        predicate: Predicate | None = None,
        limit: int = 0,
        continue_token: str | None = None,
    ) -> ListPage:
        with self.cond:
            rv = self._rv
            buckets = self._objects.get(info.group_resource, {})
            if namespace is not None:
                snapshot = [(namespace, buckets.get(namespace, {}).copy())]
            else:
                snapshot = [(ns, objs.copy()) for ns, objs in buckets.items()]
        start = _decode_continue(continue_token) if continue_token else None
        matching: list[tuple[str, str, Obj]] = []
        for ns, objs in sorted(snapshot, key=lambda pair: pair[0]):
            for name in sorted(objs):
                if start is not None and (ns, name) <= start:
                    continue
                obj = objs[name]
                if predicate is None or predicate(obj):
                    matching.append((ns, name, obj))
        page = matching[:limit] if limit > 0 else matching
        token = None
        if limit > 0 and len(matching) > limit:
            token = _encode_continue(rv, page[-1][0], page[-1][1])
        items = [o.with_api_version(obj, info) for _, _, obj in page]
        return ListPage(items, rv, token, len(matching) - len(page))

    # --- writes ----------------------------------------------------------------------------------

    def create(
        self, info: ResourceInfo, namespace: str, body: Obj, dry_run: bool = False, manager: str = ""
    ) -> Obj:
        """``manager``: the field manager recorded for the write (none: not recorded)."""
        with self.cond:
            return self._create_locked(info, namespace, body, dry_run, manager)

    def _create_locked(
        self,
        info: ResourceInfo,
        namespace: str,
        body: Obj,
        dry_run: bool,
        manager: str = "",
        managed: bool = False,
    ) -> Obj:
        body = o.require_object(body)
        o.check_kind(info, body)
        metadata = dict(o.meta(body))
        namespace = o.check_namespace(info, namespace, body)
        name = str(metadata.get("name") or "")
        if not name and metadata.get("generateName"):
            name = o.generated_name(str(metadata["generateName"]))
        o.validate_name(info, name)
        if info.namespaced and namespace in self._terminating:
            why = f"unable to create new content in namespace {namespace} because it is being terminated"
            raise forbidden(info.group, info.plural, name, why)
        gr = info.group_resource
        if self._lookup(gr, namespace, name) is not None:
            raise already_exists(info.group, info.plural, name)
        for key in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            metadata.pop(key, None)
        metadata.update(name=name, uid=o.new_uid(), creationTimestamp=o.now(), generation=1)
        if info.namespaced:
            metadata["namespace"] = namespace
        else:
            metadata.pop("namespace", None)
        obj: Obj = {**body, "apiVersion": info.api_version, "kind": info.kind, "metadata": metadata}
        if info.has_status:
            obj.pop("status", None)  # as PrepareForCreate: status is the controllers' to write
        obj = admission.admit(info, self._on_create(gr, obj), None)
        if gr == CRD_RESOURCE:
            resources_from_crd(obj)  # 422 for a malformed CRD, before anything is stored
        if not managed:
            obj = record_update(None, obj, manager, "", o.now())
        if dry_run:
            return obj
        stored = self._record(gr, "ADDED", obj, None)
        if gr == CRD_RESOURCE:
            self.registry.install_crd(stored)
        return stored

    def _on_create(self, gr: GroupResource, obj: Obj) -> Obj:
        if gr == NAMESPACES:
            spec = {**(obj.get("spec") or {}), "finalizers": ["kubernetes"]}
            return {**obj, "spec": spec, "status": {"phase": "Active"}}
        if gr == CRD_RESOURCE:
            return with_crd_status(obj)
        return obj

    def update(
        self,
        info: ResourceInfo,
        namespace: str,
        name: str,
        body: Obj,
        subresource: str = "",
        dry_run: bool = False,
        manager: str = "",
    ) -> Obj:
        body = o.require_object(body)
        o.check_kind(info, body)
        body_name = o.meta(body).get("name")
        if body_name and body_name != name:
            raise bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        o.check_namespace(info, namespace, body)
        with self.cond:
            current = self._lookup(info.group_resource, namespace, name)
            if current is None:
                raise not_found(info.group, info.plural, name)
            if not o.meta(body).get("resourceVersion") and not info.unconditional_update:
                raise invalid(
                    info.kind,
                    info.group,
                    name,
                    [("metadata.resourceVersion", "Invalid value: 0x0: must be specified for an update")],
                )
            return self._replace_locked(info, current, body, subresource, dry_run, manager=manager)

    def patch(
        self,
        info: ResourceInfo,
        namespace: str,
        name: str,
        transform: Transform,
        subresource: str = "",
        dry_run: bool = False,
        create_if_missing: bool = False,
        owns_managed_fields: bool = False,
        manager: str = "",
    ) -> tuple[Obj, bool]:
        """Apply ``transform`` to the stored object under the lock; returns (object, created).

        ``owns_managed_fields``: the transform (server-side apply) computes ``metadata.managedFields``.
        """
        with self.cond:
            current = self._lookup(info.group_resource, namespace, name)
            if current is None:
                if not create_if_missing or subresource:
                    raise not_found(info.group, info.plural, name)
                body = transform(None)
                body = {**body, "metadata": {**o.meta(body), "name": name}}
                return self._create_locked(info, namespace, body, dry_run, manager, owns_managed_fields), True
            patched = o.require_object(transform(o.with_api_version(current, info)))
            o.check_kind(info, patched)
            if o.meta(patched).get("name", name) != name:
                raise bad_request("metadata.name cannot be changed by a patch")
            o.check_namespace(info, namespace, patched)
            return self._replace_locked(
                info, current, patched, subresource, dry_run, owns_managed_fields, manager
            ), False

    def _replace_locked(
        self,
        info: ResourceInfo,
        current: Obj,
        new: Obj,
        subresource: str,
        dry_run: bool,
        managed: bool = False,
        manager: str = "",
    ) -> Obj:
        cur_meta = o.meta(current)
        body_rv = o.meta(new).get("resourceVersion")
        if body_rv and str(body_rv) != cur_meta["resourceVersion"]:
            raise stale_conflict(info.group, info.plural, cur_meta["name"])
        merged = admission.admit(info, _merge_update(info, current, new, subresource, managed), current)
        if cur_meta.get("deletionTimestamp"):
            added = set(o.meta(merged).get("finalizers") or []) - set(cur_meta.get("finalizers") or [])
            if added:
                why = (
                    "Forbidden: no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {sorted(added)}"
                )
                raise invalid(info.kind, info.group, cur_meta["name"], [("metadata.finalizers", why)])
        if o.spec_part(merged) != o.spec_part(current):
            merged["metadata"]["generation"] = int(cur_meta.get("generation") or 0) + 1
        gr = info.group_resource
        if gr == CRD_RESOURCE:
            merged = with_crd_status(merged)
            resources_from_crd(merged)  # validates before anything is stored
        if merged == current or (managed and _without_apply_times(merged) == _without_apply_times(current)):
            # A no-op write: no new resourceVersion, no event. An apply that re-sends what the
            # stored object has (the server's defaults included) changes only its entry's time.
            return o.with_api_version(current, info)
        if not managed:
            merged = record_update(current, merged, manager, subresource, o.now())
        if dry_run:
            return o.with_api_version(merged, info)
        stored = self._record(gr, "MODIFIED", merged, current)
        if gr == CRD_RESOURCE:
            self.registry.install_crd(stored)
        if o.meta(stored).get("deletionTimestamp") and not o.meta(stored).get("finalizers"):
            stored = self._finalize_locked(info.group_resource, stored)
        return o.with_api_version(stored, info)


def _merge_update(info: ResourceInfo, current: Obj, new: Obj, subresource: str, managed: bool) -> Obj:
    """The object a PUT/PATCH of ``new`` stores: system metadata and (maybe) status from ``current``."""
    if subresource == "status":
        merged = {k: v for k, v in current.items() if k != "status"}
        if "status" in new:
            merged["status"] = new["status"]
        merged["metadata"] = dict(o.meta(current))
        return merged
    cur_meta = o.meta(current)
    system = [k for k in o.SYSTEM_METADATA if not (managed and k == "managedFields")]
    metadata = {k: v for k, v in o.meta(new).items() if k not in system}
    metadata.update({k: cur_meta[k] for k in system if k in cur_meta})
    metadata.update(name=cur_meta["name"], resourceVersion=cur_meta["resourceVersion"])
    sent = o.meta(new).get("managedFields")
    if not managed and sent and sent != cur_meta.get("managedFields"):
        # A write may set managedFields (kubectl's client-side to server-side apply upgrade does);
        # ``[{}]`` clears them, an empty list leaves them as they are -- as the real server does.
        metadata.pop("managedFields", None)
        if sent != [{}]:
            metadata["managedFields"] = sent
    if "namespace" in cur_meta:
        metadata["namespace"] = cur_meta["namespace"]
    merged = {**new, "apiVersion": current["apiVersion"], "kind": current["kind"], "metadata": metadata}
    if info.has_status:
        merged.pop("status", None)
        if "status" in current:
            merged["status"] = current["status"]
    return merged


def _without_apply_times(obj: Obj) -> Obj:
    entries = [{k: v for k, v in e.items() if k != "time"} for e in o.meta(obj).get("managedFields") or []]
    return {**obj, "metadata": {**o.meta(obj), "managedFields": entries}}
