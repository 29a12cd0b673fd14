"""Deletion: preconditions, finalizers with ``deletionTimestamp``, ownerReference cascade (GC), namespaces.

Garbage collection runs synchronously under the store lock right after an owner is removed, so a
test sees the cascade as soon as the DELETE returns; the order of events (owner first, then its
dependents, transitively) is the one a real cluster's background GC produces.

A Namespace is deleted as a real cluster deletes it: the DELETE marks it (``deletionTimestamp``,
``status.phase: Terminating``), new content is refused with 403, and the namespace controller
(:meth:`DeletingStore.reap_namespaces`, run by the server's background thread after
``namespace_cleanup_delay``) deletes its contents -- objects with finalizers stay until those are
removed -- and then the Namespace itself.
"""

from __future__ import annotations

import time

from apiserver_standin import objects as o
from apiserver_standin.errors import conflict, forbidden, not_found
from apiserver_standin.registry import GroupResource, ResourceInfo
from apiserver_standin.selectors import Predicate
from apiserver_standin.storebase import CRD_RESOURCE, NAMESPACES, StoreState

Obj = o.Obj
# The NamespaceLifecycle admission plugin's immortal namespaces.
UNDELETABLE_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


class DeletingStore(StoreState):
    def delete(
        self,
        info: ResourceInfo,
        namespace: str,
        name: str,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation: str | None = None,
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """Delete one object; returns (object as of now, whether it is gone)."""
        gr = info.group_resource
        with self.cond:
            current = self._lookup(gr, namespace, name)
            if current is None:
                raise not_found(info.group, info.plural, name)
            m = o.meta(current)
            if uid and uid != m.get("uid"):
                why = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {m.get('uid')}"
                raise conflict(info.group, info.plural, name, why)
            if resource_version and resource_version != m.get("resourceVersion"):
                why = (
                    f"Precondition failed: ResourceVersion in precondition: {resource_version}, "
                    f"ResourceVersion in object meta: {m.get('resourceVersion')}"
                )
                raise conflict(info.group, info.plural, name, why)
            if dry_run:
                return o.with_api_version(current, info), not m.get("finalizers") and gr != NAMESPACES
            if gr == NAMESPACES:
                if name in UNDELETABLE_NAMESPACES:
                    raise forbidden("", "namespaces", name, "this namespace may not be deleted")
                return o.with_api_version(self._terminate_namespace_locked(current), info), False
            obj, gone = self._delete_locked(gr, current, propagation)
            return o.with_api_version(obj, info), gone

    def delete_collection(
        self, info: ResourceInfo, namespace: str | None, predicate: Predicate | None, dry_run: bool = False
    ) -> list[Obj]:
        gr = info.group_resource
        with self.cond:
            buckets = self._objects.get(gr, {})
            spaces = [namespace] if namespace is not None else sorted(buckets)
            keys = [(ns, name) for ns in spaces for name in sorted(buckets.get(ns, {}))]
            results: list[Obj] = []
            for ns, name in keys:
                current = self._lookup(gr, ns, name)  # an earlier cascade may have removed it
                if current is None or (predicate is not None and not predicate(current)):
                    continue
                obj = current if dry_run else self._delete_locked(gr, current, None)[0]
                results.append(o.with_api_version(obj, info))
            return results

    def _delete_locked(self, gr: GroupResource, obj: Obj, propagation: str | None) -> tuple[Obj, bool]:
        uid = str(o.meta(obj)["uid"])
        if propagation == "Orphan":
            self._orphan_dependents_locked(uid)
        elif propagation == "Foreground":
            # Dependents go first, then the owner (a real server holds the owner with a
            # foregroundDeletion finalizer meanwhile; here the cascade is immediate).
            self._collect_dependents_locked(uid)
        m = o.meta(obj)
        if m.get("finalizers"):
            if m.get("deletionTimestamp"):
                return obj, False
            marked_meta = {**m, "deletionTimestamp": o.now(), "deletionGracePeriodSeconds": 0}
            # A real server bumps generation when it first marks an object for deletion.
            marked_meta["generation"] = int(m.get("generation") or 0) + 1
            return self._record(gr, "MODIFIED", {**obj, "metadata": marked_meta}, obj), False
        return self._finalize_locked(gr, obj), True

    def _finalize_locked(self, gr: GroupResource, obj: Obj) -> Obj:
        """Remove ``obj`` for good, then garbage-collect what depended on it."""
        removed = self._record(gr, "DELETED", obj, obj)
        if gr == CRD_RESOURCE:
            self._drop_custom_resources_locked(obj)
        self._collect_dependents_locked(str(o.meta(obj)["uid"]))
        namespace = o.meta(obj).get("namespace")
        if namespace in self._terminating and self._terminating[namespace] <= time.monotonic():
            self._finish_namespace_locked(namespace)  # its last finalizer-held object just went
        return removed

    # --- namespaces --------------------------------------------------------------------------------

    def is_terminating(self, namespace: str) -> bool:
        with self.cond:
            return namespace in self._terminating

    def _terminate_namespace_locked(self, namespace_obj: Obj) -> Obj:
        m = o.meta(namespace_obj)
        if m.get("deletionTimestamp"):
            return namespace_obj
        marked = {
            **namespace_obj,
            "metadata": {**m, "deletionTimestamp": o.now()},
            "status": {**(namespace_obj.get("status") or {}), "phase": "Terminating"},
        }
        self._terminating[str(m["name"])] = time.monotonic() + self.namespace_cleanup_delay
        return self._record(NAMESPACES, "MODIFIED", marked, namespace_obj)

    def reap_namespaces(self) -> float | None:
        """The namespace controller's pass: empty every due namespace, remove those now empty.

        Returns the seconds until the next namespace is due, or None when none is terminating.
        """
        with self.cond:
            now = time.monotonic()
            for namespace, due in sorted(self._terminating.items()):
                if due <= now:
                    self._empty_namespace_locked(namespace)
                    self._finish_namespace_locked(namespace)
            waits = [due - now for due in self._terminating.values()]
            return max(0.0, min(waits)) if waits else None

    def _finish_namespace_locked(self, namespace: str) -> None:
        if namespace not in self._terminating:
            return  # finished already (removing its last object finished it)
        if any(namespace in buckets and buckets[namespace] for buckets in self._objects.values()):
            return  # objects held by finalizers are still there
        del self._terminating[namespace]
        current = self._lookup(NAMESPACES, "", namespace)
        if current is not None:
            self._finalize_locked(NAMESPACES, current)

    def _collect_dependents_locked(self, owner_uid: str) -> None:
        for dep_uid in sorted(self._dependents.pop(owner_uid, set())):
            found = self._lookup_uid(dep_uid)
            if found is None:
                continue
            dep_gr, dep = found
            others = o.owner_uids(dep) - {owner_uid}
            if any(uid in self._by_uid for uid in others):
                self._strip_owner_locked(dep_gr, dep, owner_uid)  # another owner still holds it
            else:
                self._delete_locked(dep_gr, dep, None)

    def _orphan_dependents_locked(self, owner_uid: str) -> None:
        for dep_uid in sorted(self._dependents.pop(owner_uid, set())):
            found = self._lookup_uid(dep_uid)
            if found is not None:
                self._strip_owner_locked(found[0], found[1], owner_uid)

    def _strip_owner_locked(self, gr: GroupResource, obj: Obj, owner_uid: str) -> None:
        m = o.meta(obj)
        refs = [r for r in m.get("ownerReferences") or [] if r.get("uid") != owner_uid]
        new_meta = {k: v for k, v in m.items() if k != "ownerReferences"}
        if refs:
            new_meta["ownerReferences"] = refs
        self._record(gr, "MODIFIED", {**obj, "metadata": new_meta}, obj)

    def _drop_custom_resources_locked(self, crd: Obj) -> None:
        # Uninstall first: the resource disappears from discovery and its URLs answer 404 at once.
        self.registry.remove_crd(str(o.meta(crd)["name"]))
        spec = crd.get("spec") or {}
        gr = (str(spec.get("group", "")), str((spec.get("names") or {}).get("plural", "")))
        for namespace, objs in list(self._objects.get(gr, {}).items()):
            for name in list(objs):
                current = self._lookup(gr, namespace, name)  # a cascade may have removed it already
                if current is not None:
                    self._finalize_locked(gr, current)

    def _empty_namespace_locked(self, namespace: str) -> None:
        for gr, buckets in list(self._objects.items()):
            for name in list(buckets.get(namespace, {})):
                current = self._lookup(gr, namespace, name)
                if current is not None and not o.meta(current).get("deletionTimestamp"):
                    self._delete_locked(gr, current, None)
