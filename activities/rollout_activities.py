"""The rollout's activities: read the pair of services, write their weights, ask Prometheus, tell
Kubernetes. I/O only; what to do with the answers is :mod:`llmisvc_core.rollout.decision`'s.

The weights are the only field written, each with the resourceVersion it was read at (a JSON merge patch
carrying ``metadata.resourceVersion``: the API server refuses it with 409 when the object changed). A
write first compares the live weight with the target and with the weight the rollout last wrote, so a
retried or replayed write never steps twice, and a weight someone else set is never overwritten.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities import errors, heartbeats
from activities.cluster_view import ClusterView
from activities.errors import ErrorType
from activities.events import EventRecorder, EventSpec
from activities.management import Management
from activities.rollout_models import (
    MembersObservation,
    MetricQueryInput,
    RolloutEventInput,
    RolloutMembers,
    WriteWeightsInput,
    WriteWeightsResult,
)
from llmisvc_core.httproute.routing_group import stored_group
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.rollout import decision
from llmisvc_core.rollout.gates import MemberObservation, MetricSample
from llmisvc_kube.api import ApiError, ClusterApi, Failure, Wire

#: A write that loses the race to another write of the object (the router's own status, say) reads again
#: and, when the weight is still the rollout's, tries again; this often, then it is left to Temporal.
CONFLICT_RETRIES = 3
EVENT_ACTION = "Rollout"
SHADOW_REFUSAL = (
    "this worker runs in shadow mode and writes nothing; run the rollout on a worker in write mode"
)


def stored_weight(raw: Wire) -> int:
    """``spec.router.route.weight`` as stored, 0 when absent (KServe reads it so)."""
    route = ((raw.get("spec") or {}).get("router") or {}).get("route") or {}
    weight = route.get("weight") if isinstance(route, dict) else None
    return weight if isinstance(weight, int) and not isinstance(weight, bool) else 0


def observe(name: str, raw: Wire | None) -> MemberObservation:
    if raw is None:
        return MemberObservation(name=name, exists=False)
    conditions = (raw.get("status") or {}).get("conditions") or []
    return MemberObservation(
        name=name,
        group=stored_group(raw),
        weight=stored_weight(raw),
        resource_version=str((raw.get("metadata") or {}).get("resourceVersion") or ""),
        conditions={str(c.get("type")): str(c.get("status")) for c in conditions if isinstance(c, dict)},
    )


class RolloutActivities:
    """Bound to the cluster connection (and the process's cache, kept fresh with what is written)."""

    def __init__(
        self,
        api: ClusterApi,
        events: EventRecorder,
        view: ClusterView | None = None,
        management: Management | None = None,
    ) -> None:
        self.api = api
        self.events = events
        self.view = view
        self.management = management or Management()

    @activity.defn(name="read_rollout_members")
    def read_rollout_members(self, members: RolloutMembers) -> MembersObservation:
        """Both services from the API server (not the cache: the weights must be the latest)."""
        with heartbeats.heartbeating(), errors.translated():
            return MembersObservation(
                stable=observe(members.stable, self.api.get(LLMISVC, members.namespace, members.stable)),
                candidate=observe(
                    members.candidate, self.api.get(LLMISVC, members.namespace, members.candidate)
                ),
            )

    @activity.defn(name="write_rollout_weights")
    def write_rollout_weights(self, request: WriteWeightsInput) -> WriteWeightsResult:
        if self.management.shadow:  # the workflow pauses, saying why
            raise errors.permanent(ErrorType.SHADOW_MODE, SHADOW_REFUSAL, benign=True)
        members = request.members
        # The service that loses weight first: the candidate's share stays between the old and the new.
        order = [
            (members.stable, request.expected.stable, request.target.stable),
            (members.candidate, request.expected.candidate, request.target.candidate),
        ]
        if request.target.stable > request.expected.stable:
            order.reverse()
        result = WriteWeightsResult()
        with heartbeats.heartbeating(), errors.translated():
            for name, expected, target in order:
                wrote, edited = self._write_weight(members, name, expected, target)
                if edited is not None:
                    result.edited = edited
                    return result
                if wrote:
                    result.written.append(name)
        return result

    def _write_weight(
        self, members: RolloutMembers, name: str, expected: int, target: int
    ) -> tuple[bool, str | None]:
        """Set one service's weight to ``target`` unless it has it already: whether it was written, and
        why not when its weight (or group) is not what the rollout left there."""
        for attempt in range(CONFLICT_RETRIES + 1):
            raw = self.api.get(LLMISVC, members.namespace, name)
            seen = observe(name, raw)
            if seen.exists and seen.group == members.group and seen.weight == target:
                return False, None
            problem = decision.member_problem(members.group, seen, expected)
            if problem is not None:
                return False, problem
            patch = {
                "metadata": {"resourceVersion": seen.resource_version},
                "spec": {"router": {"route": {"weight": target}}},
            }
            try:
                written = self.api.patch_merge(LLMISVC, members.namespace, name, patch)
            except ApiError as err:
                if err.failure is Failure.CONFLICT and attempt < CONFLICT_RETRIES:
                    continue  # changed since the read: read again, and see whether the weight still is ours
                raise
            if self.view is not None:
                self.view.observe(LLMISVC, written)
            return True, None
        raise AssertionError("unreachable: the last attempt returns or raises")

    @activity.defn(name="query_prometheus")
    def query_prometheus(self, request: MetricQueryInput) -> MetricSample:
        """One instant query (``/api/v1/query``); any failure is an answer (``error``), never a retry:
        the gate waits for the next check, as long as the plan lets it."""
        url = request.url.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": request.query})
        try:
            with urllib.request.urlopen(url, timeout=request.timeout_seconds) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as err:
            return MetricSample(error=f"HTTP {err.code} from {request.url}")
        except (urllib.error.URLError, OSError, ValueError) as err:
            return MetricSample(error=f"{request.url}: {getattr(err, 'reason', err)}")
        return sample_of(body)

    @activity.defn(name="record_rollout_event")
    def record_rollout_event(self, request: RolloutEventInput) -> None:
        """The Event on both services (best effort, as every Event: activities.events)."""
        members = request.members
        spec = EventSpec(request.type, request.reason, request.note, action=EVENT_ACTION)
        for name in (members.stable, members.candidate):
            try:
                raw = self.api.get(LLMISVC, members.namespace, name)
            except ApiError:
                continue
            if raw is not None:
                self.events.record(raw, spec)

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.read_rollout_members,
            self.write_rollout_weights,
            self.query_prometheus,
            self.record_rollout_event,
        ]


def sample_of(body: Any) -> MetricSample:
    """The one value of a Prometheus query answer: a vector of one series, or a scalar."""
    if not isinstance(body, dict) or body.get("status") != "success":
        error = body.get("error") if isinstance(body, dict) else None
        return MetricSample(error=f"query failed: {error or 'not a Prometheus answer'}")
    data = body.get("data") or {}
    result = data.get("result")
    if data.get("resultType") == "scalar" and isinstance(result, list):
        pair = result
    elif data.get("resultType") == "vector" and isinstance(result, list):
        if not result:
            return MetricSample()
        if len(result) > 1:
            return MetricSample(error=f"the query returned {len(result)} series; the gate needs one")
        pair = (result[0] or {}).get("value") or []
    else:
        return MetricSample(
            error=f"result type {data.get('resultType')!r}; the gate needs a vector or scalar"
        )
    try:
        value = float(pair[1])
    except (IndexError, TypeError, ValueError):
        return MetricSample(error="the answer holds no number")
    return MetricSample() if math.isnan(value) else MetricSample(value=value)
