"""Shadow mode as the workflow shows it: the drift of the last pass, kept in the workflow's state (the
``drift`` query, ``llmisvc-router drift``), in its current details, in the ``LlmisvcDrift`` search
attribute, on the pass span and as the ``llmisvc_router_drift_objects`` gauge. Workflow code:
replay-safe (the metric meter records nothing while replaying; spans follow ``pass_telemetry``).

A pass in write mode after shadow passes resets the report to zero: that pass writes what differs.
"""

from __future__ import annotations

from datetime import datetime

from opentelemetry import trace
from pydantic import BaseModel, Field
from temporalio import workflow

from activities.models import ServiceKey
from llmisvc_core.planner.drift import Drift, ObjectDrift

DRIFT_ATTRIBUTE = "llmisvc.drift"
DRIFT_METRIC = "llmisvc_router_drift_objects"
#: At most this many differing objects are listed in the Temporal UI's details (all in the query).
SHOWN_OBJECTS = 5


class DriftReport(BaseModel):
    """The answer of the ``drift`` query: what the last pass found different, and in which mode."""

    service: str
    mode: str  # shadow | write
    drift: int = 0  # differing objects, the service's status counting as one
    objects: list[ObjectDrift] = Field(default_factory=list)
    status: list[str] = Field(default_factory=list)
    checked_at: datetime | None = None


def shadow_pass(key: ServiceKey, found: Drift, now: datetime) -> DriftReport:
    """Record a shadow pass's drift: the report, its span attribute and its gauge."""
    report = DriftReport(
        service=str(key),
        mode="shadow",
        drift=found.count,
        objects=found.objects,
        status=found.status,
        checked_at=now,
    )
    trace.get_current_span().set_attribute(DRIFT_ATTRIBUTE, report.drift)
    record_gauge(key, report.drift)
    return report


def write_pass(key: ServiceKey, now: datetime) -> DriftReport:
    """A write-mode pass after shadow ones: it writes what differs, so no drift remains."""
    trace.get_current_span().set_attribute(DRIFT_ATTRIBUTE, 0)
    record_gauge(key, 0)
    return DriftReport(service=str(key), mode="write", checked_at=now)


def no_report(key: ServiceKey) -> DriftReport:
    """The query's answer for a workflow that never ran in shadow mode."""
    return DriftReport(service=str(key), mode="write")


def record_gauge(key: ServiceKey, value: int) -> None:
    gauge = workflow.metric_meter().create_gauge(
        DRIFT_METRIC, "Objects whose live state differs from what the router would write (shadow mode)"
    )
    # Not "namespace": Prometheus puts the scraped pod's own namespace there.
    gauge.set(value, {"llmisvc_namespace": key.namespace, "llmisvc_name": key.name})


def lines(report: DriftReport) -> list[str]:
    """``update HTTPRoute ns/x: spec.a: "1" -> "2"``: one line per differing field (or object)."""
    found = []
    for obj in report.objects:
        found += [f"{obj.describe()}: {field}" for field in obj.fields] or [obj.describe()]
        if obj.fields_left_out:
            found.append(f"{obj.describe()}: and {obj.fields_left_out} more fields")
    return found + [f"status of {report.service}: {line}" for line in report.status]


def markdown(report: DriftReport | None, handed_off: str | None) -> list[str]:
    """The drift and hand-off section of the workflow's current details in the Temporal UI."""
    found = []
    if handed_off is not None:
        found += ["", f"**Handed off:** {handed_off}. This workflow ended without changing anything."]
    if report is None:
        return found
    if report.mode == "write":
        return [*found, "", "**Mode:** write (shadow drift cleared: each pass writes what differs)"]
    found += ["", f"**Mode:** shadow (writes nothing). **Drift:** {report.drift}"]
    shown = report.objects[:SHOWN_OBJECTS]
    for obj in shown:
        found.append(f"- `{obj.describe()}`" + (f": `{'`, `'.join(obj.fields)}`" if obj.fields else ""))
    if len(report.objects) > len(shown):
        found.append(
            f"- and {len(report.objects) - len(shown)} more (`llmisvc-router drift {report.service}`)"
        )
    found += [f"- status: `{line}`" for line in report.status]
    return found
