"""The Events the router records on a service for the changes a pass makes (``activities.events``): the
status writer's for a changed ``RouterReady`` or group divergence (a spec the router cannot read among
them: ``activities.invalid_spec``), and the write activities' for each object written or refused.
"""

from __future__ import annotations

from typing import Any

from activities.events import NORMAL, WARNING, EventRecorder, EventSpec
from activities.invalid_spec import condition, same
from llmisvc_core.httproute import routing_group
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.planner.plan import WriteOp
from llmisvc_core.world import conditions
from llmisvc_kube.api import ApiError, ClusterApi, Wire

ROUTER_READY_REASON = "RouterReady"
NOT_READY_REASON = "RouterNotReady"
WRITE_REASONS = {"create": "Created", "update": "Updated", "delete": "Deleted"}
WRITE_REFUSED = "WriteRefused"


def condition_events(stored: dict[str, Any], written: dict[str, Any]) -> list[EventSpec]:
    """The Events for a change of ``RouterReady``, and of a group's divergence, between the stored and
    the written status."""
    return [*_router_ready_events(stored, written), *_divergence_events(stored, written)]


def _router_ready_events(stored: dict[str, Any], written: dict[str, Any]) -> list[EventSpec]:
    before = condition(stored, conditions.ROUTER_READY)
    after = condition(written, conditions.ROUTER_READY)
    if after is None or same(before, after):
        return []
    if after.get("status") == "True":
        url = written.get("url")
        return [EventSpec(NORMAL, ROUTER_READY_REASON, "the router is ready" + (f" at {url}" if url else ""))]
    note = after.get("message") or f"RouterReady is {after.get('status')}"
    return [EventSpec(WARNING, after.get("reason") or NOT_READY_REASON, note)]


def _divergence_events(stored: dict[str, Any], written: dict[str, Any]) -> list[EventSpec]:
    """KServe's Warning ``MemberDivergence`` (``applyGroupStatus``), when GroupDegraded turns to it or its
    message changes; KServe emits it on every reconcile, which its recorder folds into one series."""
    after = condition(written, conditions.GROUP_DEGRADED)
    if after is None or after.get("reason") != routing_group.MEMBER_DIVERGENCE:
        return []
    if same(condition(stored, conditions.GROUP_DEGRADED), after):
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
