"""Deletion: preconditions, finalizers with ``deletionTimestamp``, propagation policies, namespaces.

A DELETE removes an object without finalizers at once. Its propagation policy decides what happens
to its dependents (objects whose ``ownerReferences`` name its uid), as kube-apiserver and the
garbage collector do it -- asynchronously (:mod:`apiserver_standin.garbage_collector`):
``Background`` (the default) removes the owner now and its dependents shortly after; ``Foreground``
marks the owner (``deletionTimestamp``, finalizer ``foregroundDeletion``) and removes it once the
dependents that block it are gone; ``Orphan`` marks it (finalizer ``orphan``), strips its
references from the dependents, then removes it.

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
# The finalizers the API server adds for the Orphan and Foreground propagation policies.
ORPHAN, FOREGROUND = "orphan", "foregroundDeletion"


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
        self,
        info: ResourceInfo,
        namespace: str | None,
        predicate: Predicate | None,
        dry_run: bool = False,
        propagation: str | None = None,
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
                obj = current if dry_run else self._delete_locked(gr, current, propagation)[0]
                results.append(o.with_api_version(obj, info))
            return results

    def _delete_locked(self, gr: GroupResource, obj: Obj, propagation: str | None) -> tuple[Obj, bool]:
        m = o.meta(obj)
        finalizers = list(m.get("finalizers") or [])
        policy_finalizer = {"Orphan": ORPHAN, "Foreground": FOREGROUND}.get(propagation or "")
        if policy_finalizer is not None and policy_finalizer not in finalizers:
            # The policy given last wins, as on a real server: the other policy's finalizer goes.
            finalizers = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)] + [policy_finalizer]
        if not finalizers:
            return self._finalize_locked(gr, obj), True
        if m.get("deletionTimestamp") and finalizers == list(m.get("finalizers") or []):
            return obj, False
        marked_meta = {**m, "finalizers": finalizers}
        if not m.get("deletionTimestamp"):
            marked_meta.update(deletionTimestamp=o.now(), deletionGracePeriodSeconds=0)
            # A real server bumps generation when it first marks an object for deletion.
            marked_meta["generation"] = int(m.get("generation") or 0) + 1
        if policy_finalizer is not None:
            self._schedule_gc_locked(str(m["uid"]))
        return self._record(gr, "MODIFIED", {**obj, "metadata": marked_meta}, obj), False

    def _finalize_locked(self, gr: GroupResource, obj: Obj) -> Obj:
        """Remove ``obj`` for good, then garbage-collect what depended on it."""
        removed = self._record(gr, "DELETED", obj, obj)
        if gr == CRD_RESOURCE:
            self._drop_custom_resources_locked(obj)
        self._schedule_gc_locked(str(o.meta(obj)["uid"]))  # its dependents go shortly after
        namespace = o.meta(obj).get("namespace")
        if namespace in self._terminating and self._terminating[namespace] <= time.monotonic():
            self._finish_namespace_locked(namespace)  # its last finalizer-held object just went
        return removed

    # --- namespaces --------------------------------------------------------------------------------

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
