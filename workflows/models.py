"""Messages of the per-service workflow: its input, the state it carries across continue-as-new, the
signals, query and update payloads. Signals carry keys and reasons, never objects: every pass re-reads
the world."""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from pydantic import BaseModel, Field

from llmisvc_cache.model import SeenVersion
from llmisvc_core.merge.rendered_validation import Verdict
from llmisvc_core.planner.plan import Outcome
from llmisvc_core.world.events import PlannedEvent
from workflows.drift_report import DriftReport

WORKFLOW_NAME = "LLMInferenceServiceWorkflow"
DEFAULT_TASK_QUEUE = "llmisvc-router"
DEFAULT_RESYNC_SECONDS = 600


ID_PREFIX = "llmisvc"
#: A cluster name (``LLMISVC_ROUTER_CLUSTER``): a DNS-1123 label, as a namespace is.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def workflow_id(namespace: str, name: str, cluster: str = "") -> str:
    """One workflow per LLMInferenceService: ``llmisvc/<namespace>/<name>``, or, for an install given a
    cluster name (several clusters sharing one Temporal namespace),
    ``llmisvc/<cluster>/<namespace>/<name>``.

    The unnamed form is the one installs used before cluster names existed, so their workflows keep
    their ids. The two cannot be confused: a cluster name is a DNS-1123 label and a namespace and a name
    are DNS names, none holding ``/``, so the number of parts tells them apart
    (:func:`parse_workflow_id`)."""
    return "/".join((ID_PREFIX, *((cluster,) if cluster else ()), namespace, name))


class ServiceWorkflowId(NamedTuple):
    cluster: str  # "": an install without a cluster name
    namespace: str
    name: str


def parse_workflow_id(text: str) -> ServiceWorkflowId | None:
    """The service (and cluster) of a workflow id :func:`workflow_id` made; None for any other id."""
    prefix, *parts = text.split("/")
    if prefix != ID_PREFIX or not all(parts) or len(parts) not in (2, 3):
        return None
    cluster = parts[0] if len(parts) == 3 else ""
    if cluster and not _DNS_LABEL.match(cluster):
        return None
    return ServiceWorkflowId(cluster, parts[-2], parts[-1])


def check_cluster_name(value: str) -> str:
    """``value`` stripped; ValueError unless it is empty (no cluster name) or a DNS-1123 label."""
    value = value.strip()
    if value and not _DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} is not a DNS-1123 label (at most 63 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit)"
        )
    return value


#: A pass waits for at most this many versions seen by its triggers (the newest per object).
MAX_SEEN = 64


class ReconcileSignal(BaseModel):
    """Signal ``reconcile``: something that may change the service's routing happened.

    ``seen`` names the objects (and versions) whose change the sender saw, so the pass waits until the
    worker's cache has them before it plans."""

    reason: str = "requested"
    seen: list[SeenVersion] = Field(default_factory=list)


class PassSummary(BaseModel):
    """What one pass ended with; also the result of the ``reconcile_now`` update."""

    outcome: Outcome
    message: str | None = None
    router_ready: str = "Unknown"  # True / False / Unknown
    conditions: dict[str, str] = Field(default_factory=dict)  # type -> "True"/"False(reason)"/…
    url: str | None = None
    writes: int = 0
    status_written: bool = False
    finished_at: datetime | None = None
    build_id: str | None = None  # the versioned worker's build that ran the pass (Worker Versioning)
    drift: int | None = None  # shadow mode: the objects that differ (workflows.drift_report)


#: The triggers one pass remembers by their reason (the rest are counted), and the length of a reason.
MAX_PENDING_REASONS = 32
MAX_REASON_CHARS = 200


class WorkflowState(BaseModel):
    """Carried across continue-as-new; answered by the ``state`` query."""

    uid: str | None = None
    pass_count: int = 0
    last: PassSummary | None = None
    last_error: str | None = None
    pending_reasons: list[str] = Field(default_factory=list)
    pending_dropped: int = 0  # triggers past MAX_PENDING_REASONS, counted, not kept
    pending_seen: list[SeenVersion] = Field(default_factory=list)  # what the pending triggers saw
    desired_stop: bool | None = None  # a stop/resume signal not carried out yet
    recheck_attempt: int = 0  # capped backoff after a pass that did not reconcile
    gone: bool = False
    drift: DriftReport | None = None  # set once a pass ran in shadow mode (workflows.drift_report)
    handed_off: str | None = None  # why the service left this deployment's selection; the workflow ends
    rendered: Verdict | None = None  # the API server's last final verdict on the merged spec (#5918)
    #: The Events the last completed pass planned (``Planned.events``): a pass records only those
    #: not among them, so an unchanged warning is told once, not on every pass.
    announced: list[PlannedEvent] = Field(default_factory=list)

    @property
    def ended(self) -> bool:
        return self.gone or self.handed_off is not None

    def add_reason(self, reason: str) -> None:
        """Note a trigger of the next pass; bounded, so that a flood of signals between two passes cannot
        grow the state (query answers, continue-as-new input) past a payload's size."""
        if len(self.pending_reasons) >= MAX_PENDING_REASONS:
            self.pending_dropped += 1
            return
        clipped = reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS] + "…"
        self.pending_reasons.append(clipped)

    def take_reasons(self) -> list[str]:
        """The triggers of the pass about to run (the dropped ones as a count), leaving none pending."""
        reasons = self.pending_reasons
        if self.pending_dropped:
            reasons = [*reasons, f"… and {self.pending_dropped} more"]
        self.pending_reasons, self.pending_dropped = [], 0
        return reasons


class ServiceWorkflowInput(BaseModel):
    namespace: str
    name: str
    resync_seconds: int = DEFAULT_RESYNC_SECONDS
    #: Keep the custom search attributes up to date; starters set it only when the namespace has them
    #: registered, since setting an unregistered one fails the workflow task.
    search_attributes: bool = False
    #: ``LlmisvcDrift`` and ``LlmisvcPassFailing`` too: set only by starters that found them registered,
    #: so a workflow started before they were added (and carrying ``search_attributes``) never sets an
    #: unregistered attribute.
    drift_attribute: bool = False
    state: WorkflowState | None = None


class ServiceWorkflowResult(BaseModel):
    passes: int
    reason: str
