"""The garbage collector: what kube-controller-manager's GC does with dependents, asynchronously.

Deletion (:mod:`apiserver_standin.deletion`) schedules an owner uid; the server's controller thread
runs :meth:`CollectingStore.collect_garbage`, which, for each uid that is due:

- owner gone (``Background``, or the end of any policy): each dependent that no other live owner
  holds is deleted (in the background, so the cascade goes on transitively); one that another live
  owner holds only loses the reference to the gone owner;
- owner held by ``orphan``: its reference is stripped from every dependent, then the finalizer goes;
- owner held by ``foregroundDeletion``: the dependents are deleted (foreground for those with
  ``blockOwnerDeletion: true``), and once none of those is left the finalizer goes and the owner
  with it. Until then the owner is looked at again every ``FOREGROUND_POLL`` seconds.

A test therefore sees the dependents after the owner's DELETE returns and must wait for them to go,
as on a real cluster.
"""

from __future__ import annotations

import time

from apiserver_standin import objects as o
from apiserver_standin.deletion import FOREGROUND, ORPHAN, DeletingStore
from apiserver_standin.registry import GroupResource

Obj = o.Obj
FOREGROUND_POLL = 0.05
FOREGROUND_POLICY = "Foreground"


class CollectingStore(DeletingStore):
    def collect_garbage(self) -> float | None:
        """One pass over the due owners; returns the seconds until the next is due (None: none)."""
        with self.cond:
            now = time.monotonic()
            for uid, due in sorted(self._gc_due.items(), key=lambda item: item[1]):
                if due <= now and self._gc_due.get(uid) == due:
                    del self._gc_due[uid]
                    self._attend_locked(uid)
            waits = [due - now for due in self._gc_due.values()]
            return max(0.0, min(waits)) if waits else None

    def _attend_locked(self, uid: str) -> None:
        found = self._lookup_uid(uid)
        if found is None:
            self._collect_dependents_locked(uid)
            return
        gr, owner = found
        finalizers = o.meta(owner).get("finalizers") or []
        if not o.meta(owner).get("deletionTimestamp"):
            return
        if ORPHAN in finalizers:
            for dep_gr, dep in self._live_dependents_locked(uid):
                self._strip_owner_locked(dep_gr, dep, uid)
            self._dependents.pop(uid, None)
            self._remove_finalizer_locked(gr, owner, ORPHAN)
        elif FOREGROUND in finalizers:
            if self._delete_for_foreground_locked(uid):
                self._schedule_gc_locked(uid, FOREGROUND_POLL)
            else:
                self._remove_finalizer_locked(gr, owner, FOREGROUND)

    def _delete_for_foreground_locked(self, uid: str) -> bool:
        """Delete the dependents of ``uid``; whether some that block its deletion remain."""
        blocked = False
        for dep_gr, dep in self._live_dependents_locked(uid):
            refs = o.meta(dep).get("ownerReferences") or []
            blocks = any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in refs)
            if self._held_by_another_owner_locked(dep, uid):
                self._strip_owner_locked(dep_gr, dep, uid)
                continue
            if not o.meta(dep).get("deletionTimestamp"):
                _, gone = self._delete_locked(dep_gr, dep, FOREGROUND_POLICY if blocks else None)
                if gone:
                    continue
            blocked = blocked or blocks
        return blocked

    def _held_by_another_owner_locked(self, dep: Obj, owner_uid: str) -> bool:
        for other in o.owner_uids(dep) - {owner_uid}:
            found = self._lookup_uid(other)
            if found is not None and not o.meta(found[1]).get("deletionTimestamp"):
                return True
        return False

    def _live_dependents_locked(self, uid: str) -> list[tuple[GroupResource, Obj]]:
        found = (self._lookup_uid(dep_uid) for dep_uid in sorted(self._dependents.get(uid, set())))
        return [pair for pair in found if pair is not None]

    def _collect_dependents_locked(self, owner_uid: str) -> None:
        for dep_uid in sorted(self._dependents.get(owner_uid, set())):
            current = self._lookup_uid(dep_uid)  # an earlier deletion in this loop may have removed it
            if current is None:
                continue
            dep_gr, dep = current
            if any(uid in self._by_uid for uid in o.owner_uids(dep) - {owner_uid}):
                self._strip_owner_locked(dep_gr, dep, owner_uid)  # another owner still holds it
            else:
                self._delete_locked(dep_gr, dep, None)
        self._dependents.pop(owner_uid, None)

    def _strip_owner_locked(self, gr: GroupResource, obj: Obj, owner_uid: str) -> None:
        m = o.meta(obj)
        refs = [r for r in m.get("ownerReferences") or [] if r.get("uid") != owner_uid]
        new_meta = {k: v for k, v in m.items() if k != "ownerReferences"}
        if refs:
            new_meta["ownerReferences"] = refs
        self._record(gr, "MODIFIED", {**obj, "metadata": new_meta}, obj)

    def _remove_finalizer_locked(self, gr: GroupResource, obj: Obj, finalizer: str) -> None:
        m = o.meta(obj)
        rest = [f for f in m.get("finalizers") or [] if f != finalizer]
        new_meta = {k: v for k, v in m.items() if k != "finalizers"}
        if rest:
            new_meta["finalizers"] = rest
        stored = self._record(gr, "MODIFIED", {**obj, "metadata": new_meta}, obj)
        if not rest:
            self._finalize_locked(gr, stored)
