"""Knative condition semantics on ``status.conditions`` (spec Appendix E) and the RouterReady rollup (3.9).

The router owns ``GatewaysReady``, ``HTTPRoutesReady``, ``InferencePoolReady``, ``SchedulerWorkloadReady``,
``TokenizerReady`` and ``RouterReady``, and keeps ``Ready`` in step as knative's living condition set does.
Conditions of other controllers (``WorkloadsReady``, ``PresetsCombined`` …) are kept as they are.
"""

from __future__ import annotations

from llmisvc_core.models.llmisvc import LLMInferenceServiceStatus, ServiceCondition

READY = "Ready"
WORKLOADS_READY = "WorkloadsReady"
ROUTER_READY = "RouterReady"
GATEWAYS_READY = "GatewaysReady"
HTTPROUTES_READY = "HTTPRoutesReady"
INFERENCE_POOL_READY = "InferencePoolReady"
SCHEDULER_WORKLOAD_READY = "SchedulerWorkloadReady"
#: The standalone tokenizer Deployment (KServe #5712), last in the RouterReady rollup.
TOKENIZER_READY = "TokenizerReady"
#: Traffic splitting (KServe #5798): outside the Ready and RouterReady rollups (severity Info).
GROUP_READY = "GroupReady"
GROUP_DEGRADED = "GroupDegraded"
#: Set by the configuration merge; part of the Ready rollup since KServe #5918 (a failed merge stops the
#: pass before the router runs, and Ready must not read True off the stale conditions left behind).
PRESETS_COMBINED = "PresetsCombined"

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"
SEVERITY_INFO = "Info"

#: Conditions whose state flows into ``Ready`` (knative "dependents" of the happy condition): KServe's
#: ``NewLivingConditionSet(PresetsCombined, WorkloadsReady, RouterReady)`` at ``aaac4e294`` (#5918).
TERMINAL = (PRESETS_COMBINED, WORKLOADS_READY, ROUTER_READY)
#: The rollup order of R-RR-1: the first False among these decides RouterReady.
ROUTER_SUBCONDITIONS = (
    GATEWAYS_READY,
    HTTPROUTES_READY,
    INFERENCE_POOL_READY,
    SCHEDULER_WORKLOAD_READY,
    TOKENIZER_READY,
)

STOPPED_REASON = "Stopped"
STOPPED_MESSAGE = "Service is stopped"


class Conditions:
    """Set/unset operations on one status, stamping changed conditions with the pass's ``now``."""

    def __init__(self, status: LLMInferenceServiceStatus, now: str) -> None:
        self.status = status
        self.now = now

    def get(self, type_: str) -> ServiceCondition | None:
        for cond in self.status.conditions or []:
            if cond.type == type_:
                return cond
        return None

    def mark_true(self, type_: str, reason: str | None = None, message: str | None = None) -> None:
        self._set(
            ServiceCondition(
                type=type_, status=TRUE, severity=_severity(type_), reason=reason, message=message
            )
        )
        self._recompute_ready()

    def mark_false(self, type_: str, reason: str, message: str) -> None:
        self._set(
            ServiceCondition(
                type=type_, status=FALSE, severity=_severity(type_), reason=reason, message=message
            )
        )
        if type_ in TERMINAL:
            self._set(ServiceCondition(type=READY, status=FALSE, reason=reason, message=message))

    def mark_unknown(self, type_: str, reason: str | None = None, message: str | None = None) -> None:
        self._set(
            ServiceCondition(
                type=type_, status=UNKNOWN, severity=_severity(type_), reason=reason, message=message
            )
        )
        # knative: a False terminal condition trumps Unknown; Ready is then made False, with *this* reason
        # and message if it was not False already.
        if any((c := self.get(t)) is not None and c.status == FALSE for t in TERMINAL):
            ready = self.get(READY)
            if ready is None or ready.status != FALSE:
                self._set(ServiceCondition(type=READY, status=FALSE, reason=reason, message=message))
            return
        if type_ in TERMINAL:
            self._set(ServiceCondition(type=READY, status=UNKNOWN, reason=reason, message=message))

    def unset(self, type_: str) -> None:
        if type_ in (READY, *TERMINAL):
            return
        self.status.conditions = [c for c in self.status.conditions or [] if c.type != type_] or None

    def _set(self, new: ServiceCondition) -> None:
        old = self.get(new.type)
        if old is not None and _same(old, new):
            return
        new.last_transition_time = self.now
        kept = [c for c in self.status.conditions or [] if c.type != new.type]
        self.status.conditions = sorted([*kept, new], key=lambda c: c.type)

    def _recompute_ready(self) -> None:
        """E.2: Ready follows the newest False terminal condition, else the newest Unknown, else True."""
        terminals = [c for c in self.status.conditions or [] if not c.severity and c.type != READY]
        terminals.sort(key=lambda c: c.last_transition_time or "", reverse=True)
        for wanted in (FALSE, UNKNOWN):
            for cond in terminals:
                if cond.status == wanted:
                    self._set(
                        ServiceCondition(type=READY, status=wanted, reason=cond.reason, message=cond.message)
                    )
                    return
        if len(terminals) < len(TERMINAL):
            self._set(ServiceCondition(type=READY, status=UNKNOWN))
        else:
            self._set(ServiceCondition(type=READY, status=TRUE))


def _severity(type_: str) -> str | None:
    return None if type_ in (READY, *TERMINAL) else SEVERITY_INFO


def _same(a: ServiceCondition, b: ServiceCondition) -> bool:
    """Identical in every field but lastTransitionTime (empty and absent strings are alike)."""
    return (a.type, a.status, a.severity or "", a.reason or "", a.message or "") == (
        b.type,
        b.status,
        b.severity or "",
        b.reason or "",
        b.message or "",
    )


def initialize(conds: Conditions, generation: int | None, observed_generation: int | None) -> None:
    """E.3 pre-processing: ensure Ready and the terminal conditions exist; flag a new generation."""
    ready = conds.get(READY)
    if ready is None:
        conds._set(ServiceCondition(type=READY, status=UNKNOWN))
        ready = conds.get(READY)
    initial = TRUE if ready is not None and ready.status == TRUE else UNKNOWN
    for type_ in TERMINAL:
        if conds.get(type_) is None:
            conds._set(ServiceCondition(type=type_, status=initial))
    if observed_generation != generation:
        # knative's MarkUnknown(Ready): with a False terminal condition Ready becomes False, but still with
        # the NewObservedGenFailure reason and message (not the terminal condition's).
        conds.mark_unknown(READY, "NewObservedGenFailure", "unsuccessfully observed a new generation")


def finalize(
    status: LLMInferenceServiceStatus, before: list[ServiceCondition], generation: int | None
) -> None:
    """E.4 post-processing: observedGeneration, and unchanged conditions keep their old timestamp."""
    status.observed_generation = generation
    old_by_type = {c.type: c for c in before}
    for cond in status.conditions or []:
        old = old_by_type.get(cond.type)
        if old is not None and _same(old, cond):
            cond.last_transition_time = old.last_transition_time


def determine_router_readiness(conds: Conditions) -> None:
    """R-RR-1: RouterReady copies the first False sub-condition, else it is True."""
    for type_ in ROUTER_SUBCONDITIONS:
        cond = conds.get(type_)
        if cond is not None and cond.status == FALSE:
            conds.mark_false(ROUTER_READY, cond.reason or "", cond.message or "")
            return
    conds.mark_true(ROUTER_READY)


def mark_stopped(conds: Conditions, type_: str) -> None:
    conds.mark_false(type_, STOPPED_REASON, STOPPED_MESSAGE)
