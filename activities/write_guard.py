"""Writes that cannot hit the wrong object: what a write activity checks before each write it makes.

A pass plans its writes from the cache (``fetch_gateways``) and carries them out in later activities,
which Temporal retries for minutes. A plan is only good for the world it was made from, so each write
travels with what the plan saw of its target (:class:`PlannedTarget`: the target's uid and
resourceVersion, or that it was absent), and the write activity checks, on every attempt:

- the owner: the service still has the uid the pass planned for (from the cache on a first attempt,
  from the API on a retry). A service deleted and created again gets nothing planned for the old one;
- on a retry, each target read from the API: still absent for a create, the same object at the same
  version for an update, for a delete the same object (uid) still controlled by the service;
- every DELETE carries preconditions (uid, and the resourceVersion at which the object was last seen
  to be ours), so the API server refuses it if the object was replaced or changed in between.

A mismatch is not retried: the activity ends with ``StalePlan``
(:attr:`activities.errors.ErrorType.STALE_PLAN`) and the workflow plans again at once from fresh reads.
The service's own check that an object is ours is the core's
(``llmisvc_core.world.writes.is_controlled_by``); this module only compares what was planned with what is.
"""

from __future__ import annotations

from collections.abc import Mapping

from activities.cluster_view import ClusterView
from activities.models import PlannedTarget, ServiceKey
from llmisvc_core.models.kube import LLMISVC, ObjectKey
from llmisvc_core.planner.plan import WriteOp
from llmisvc_kube.api import ClusterApi, Wire


class StalePlanError(Exception):
    """The world is no longer the one the plan was made from; the message says what changed."""


def planned_targets(
    ops: list[WriteOp], view: ClusterView, read: Mapping[ObjectKey, str]
) -> list[PlannedTarget]:
    """The targets of ``ops`` as the plan read them (``read``: the reader's versions, ``-`` for absent),
    with their uids from the cache, which the plan was made from moments ago."""
    targets = []
    for op in ops:
        key = op.key()
        seen = view.get(key.type, key.namespace, key.name)
        meta = (seen or {}).get("metadata") or {}
        version = read.get(key, meta.get("resourceVersion") or "-")
        if version == "-":
            targets.append(PlannedTarget(ref=op.ref()))
            continue
        # The version the plan judged, even if the watch brought a newer one since: a DELETE's
        # precondition must name the state in which the object was seen to be ours.
        rv = version if version != "?" else meta.get("resourceVersion")
        targets.append(PlannedTarget(ref=op.ref(), uid=meta.get("uid"), resource_version=rv))
    return targets


def check_owner(api: ClusterApi, view: ClusterView, key: ServiceKey, uid: str | None, fresh: bool) -> Wire:
    """The service the writes are for, still with ``uid``: read from the cache, or from the API when
    ``fresh`` (a retried attempt) or when the cache does not have it."""
    current = None if fresh else view.get(LLMISVC, key.namespace, key.name)
    if current is None:
        current = api.get(LLMISVC, key.namespace, key.name)
        _remember(view, key, current)
    if current is None:
        raise StalePlanError(f"LLMInferenceService {key} is gone since the pass planned")
    if uid is not None and _uid(current) != uid:
        raise StalePlanError(f"LLMInferenceService {key} was replaced (uid {_uid(current)}, not {uid})")
    return current


def check_manifest_owner(op: WriteOp, owner_uid: str | None) -> None:
    """A manifest names its controller; it must be the service the writes are for."""
    if op.apply is None or owner_uid is None:
        return
    for ref in (op.apply.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid") != owner_uid:
            raise StalePlanError(f"{op.describe()}: its controller uid {ref.get('uid')} is not {owner_uid}")


def check_target(
    op: WriteOp, planned: PlannedTarget | None, live: Wire | None, owner_uid: str | None
) -> Wire | None:
    """Compare a target read now with what the plan saw; returns the live object (None: absent).

    Called on retried attempts, and for every delete (whose preconditions come from ``live``)."""
    what = op.describe()
    if op.apply is not None:
        if planned is None:
            return live  # a plan from before targets were recorded: the update's resourceVersion guards it
        if planned.uid is None and live is not None:
            raise StalePlanError(f"{what}: the object exists now (uid {_uid(live)})")
        expected_rv = (op.apply.get("metadata") or {}).get("resourceVersion")
        if expected_rv and (live is None or _uid(live) != planned.uid or _rv(live) != expected_rv):
            raise StalePlanError(f"{what}: the object is not the one planned (resourceVersion {expected_rv})")
        return live
    if live is None:
        return None  # deleted already: nothing left to do
    if planned is not None and planned.uid is not None and _uid(live) != planned.uid:
        raise StalePlanError(f"{what}: it was replaced (uid {_uid(live)}, planned for {planned.uid})")
    if not _controlled_by(live, owner_uid):
        raise StalePlanError(f"{what}: it is not controlled by the LLMInferenceService (uid {owner_uid})")
    return live


def delete_preconditions(planned: PlannedTarget | None, live: Wire | None) -> tuple[str | None, str | None]:
    """(uid, resourceVersion) a DELETE must carry: the version last seen to be ours, live if read."""
    if live is not None:
        return _uid(live), _rv(live)
    if planned is not None:
        return planned.uid, planned.resource_version
    return None, None


def _controlled_by(obj: Wire, owner_uid: str | None) -> bool:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return owner_uid is not None and ref.get("uid") == owner_uid
    return False


def _remember(view: ClusterView, key: ServiceKey, found: Wire | None) -> None:
    if found is None:
        view.observe_deleted(LLMISVC, key.namespace, key.name)
    else:
        view.observe(LLMISVC, found)


def _uid(obj: Wire) -> str | None:
    uid = (obj.get("metadata") or {}).get("uid")
    return str(uid) if uid is not None else None


def _rv(obj: Wire) -> str | None:
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    return str(rv) if rv is not None else None
