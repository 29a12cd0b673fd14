"""What the router tells Kubernetes about a service besides the planned status: the status of a spec it
cannot read, and the Events for the changes a pass makes (``activities.events``).

A spec the router cannot parse still gets a status, so ``kubectl get llmisvc`` and ``kubectl describe``
say why nothing happens: ``Ready`` and ``RouterReady`` False with reason ``InvalidSpec`` and a message
naming the field. It is written as a JSON merge patch of the status subresource (the spec is never sent
back), only when it differs from what is stored, and with a Warning Event.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from activities.events import NORMAL, WARNING, EventRecorder, EventSpec
from llmisvc_core.httproute import routing_group
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.planner.plan import WriteOp
from llmisvc_core.world import conditions
from llmisvc_core.world.status_merge import conditions_of, merge_status, type_of
from llmisvc_kube.api import ApiError, ClusterApi, Wire

INVALID_SPEC = "InvalidSpec"
ROUTER_READY_REASON = "RouterReady"
NOT_READY_REASON = "RouterNotReady"
WRITE_REASONS = {"create": "Created", "update": "Updated", "delete": "Deleted"}
WRITE_REFUSED = "WriteRefused"


def _timestamp(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(status: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions_of(status) if type_of(c) == type_), None)


def _same(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    fields = ("status", "reason", "message")
    return a is not None and b is not None and all(a.get(f) == b.get(f) for f in fields)


def invalid_spec_status(
    stored: dict[str, Any],
    message: str,
    now: datetime,
    reason: str = INVALID_SPEC,
    generation: int | None = None,
) -> dict[str, Any]:
    """``stored`` with Ready and RouterReady False for a spec the router cannot read or handle (``reason``;
    ``activities.payload_guard`` uses it for one too large to handle), other conditions kept, and
    ``observedGeneration`` set to ``generation`` (when given): knative's post-processing marks every
    generation it processed, failed or not, so a client sees the answer is for the spec it wrote."""
    planned = []
    for type_ in (conditions.READY, conditions.ROUTER_READY):
        old = _condition(stored, type_)
        new = {"type": type_, "status": "False", "reason": reason, "message": message}
        new["lastTransitionTime"] = (
            old["lastTransitionTime"] if _same(old, new) and old and old.get("lastTransitionTime")
            else _timestamp(now)
        )  # fmt: skip
        planned.append(new)
    kept = [c for c in conditions_of(stored) if type_of(c) in conditions.ROUTER_SUBCONDITIONS]
    planned_status: dict[str, Any] = {"conditions": [*planned, *kept]}
    if isinstance(generation, int) and not isinstance(generation, bool):
        planned_status["observedGeneration"] = generation
    return merge_status(stored, planned_status)


def report_invalid_spec(api: ClusterApi, events: EventRecorder, raw: Wire, message: str) -> bool:
    """Write the status of a spec the router cannot read, and a Warning Event when it changed.

    True when the status was written (False: it already said so)."""
    stored = raw.get("status") or {}
    meta = raw.get("metadata") or {}
    status = invalid_spec_status(stored, message, datetime.now(UTC), generation=meta.get("generation"))
    if status == stored:
        return False
    api.patch_status_merge(LLMISVC, meta.get("namespace", ""), meta.get("name", ""), {"status": status})
    events.record(raw, EventSpec(WARNING, INVALID_SPEC, message))
    return True


def condition_events(stored: dict[str, Any], written: dict[str, Any]) -> list[EventSpec]:
    """The Events for a change of ``RouterReady``, and of a group's divergence, between the stored and
    the written status."""
    return [*_router_ready_events(stored, written), *_divergence_events(stored, written)]


def _router_ready_events(stored: dict[str, Any], written: dict[str, Any]) -> list[EventSpec]:
    before = _condition(stored, conditions.ROUTER_READY)
    after = _condition(written, conditions.ROUTER_READY)
    if after is None or _same(before, after):
        return []
    if after.get("status") == "True":
        url = written.get("url")
        return [EventSpec(NORMAL, ROUTER_READY_REASON, "the router is ready" + (f" at {url}" if url else ""))]
    note = after.get("message") or f"RouterReady is {after.get('status')}"
    return [EventSpec(WARNING, after.get("reason") or NOT_READY_REASON, note)]


def _divergence_events(stored: dict[str, Any], written: dict[str, Any]) -> list[EventSpec]:
    """KServe's Warning ``MemberDivergence`` (``applyGroupStatus``), when GroupDegraded turns to it or its
    message changes; KServe emits it on every reconcile, which its recorder folds into one series."""
    after = _condition(written, conditions.GROUP_DEGRADED)
    if after is None or after.get("reason") != routing_group.MEMBER_DIVERGENCE:
        return []
    if _same(_condition(stored, conditions.GROUP_DEGRADED), after):
        return []
    group = ((written.get("router") or {}).get("group") or {}).get("name") or ""
    return [EventSpec(WARNING, routing_group.MEMBER_DIVERGENCE, routing_group.divergence_event_note(group))]


def record_status_change(events: EventRecorder, raw: Wire, written: dict[str, Any]) -> None:
    """From the status write: the Events for what changed between ``raw``'s status and ``written``."""
    for event in condition_events(raw.get("status") or {}, written):
        events.record(raw, event)


class WriteEvents:
    """Events on the service for the objects a phase created, updated or deleted, or that were refused.

    An Event needs the service's uid to show in ``kubectl describe``: the caller passes the service as its
    cache has it; without one it is read once, on the first write."""

    def __init__(
        self, api: ClusterApi, events: EventRecorder, namespace: str, name: str, service: Wire | None = None
    ) -> None:
        self.api, self.events = api, events
        self.namespace, self.name = namespace, name
        self._service = service

    def wrote(self, op: WriteOp) -> None:
        verb, _, what = op.describe().partition(" ")
        self._record(EventSpec(NORMAL, WRITE_REASONS.get(verb, "Written"), f"{verb}d {what}"))

    def refused(self, op: WriteOp, message: str) -> None:
        verb, _, what = op.describe().partition(" ")
        self._record(EventSpec(WARNING, WRITE_REFUSED, f"cannot {verb} {what}: {message}"))

    def _record(self, event: EventSpec) -> None:
        if self._service is None:
            try:
                self._service = self.api.get(LLMISVC, self.namespace, self.name)
            except ApiError:
                return  # best effort, as the Event itself
        if self._service is not None:
            self.events.record(self._service, event)
