"""What a pass reports besides the status it writes: one span and two metrics. Workflow code: replay-safe.

**Trace.** Each pass is one span, ``reconcile pass``, and so one trace. A pass asked for by signals or
updates continues the trace of the first of them (the watcher's signal carries its trace context in its
headers, put there by the Temporal OpenTelemetry plugin, which makes it current in the handler) and
links to the others coalesced into it; a pass of the resync timer starts a trace of its own. The
activities' spans nest under the pass span, the Kubernetes API calls under them. Attributes:
``llmisvc.namespace``, ``llmisvc.name``, ``llmisvc.generation``, ``llmisvc.outcome``. Spans are only
made with the SDK's replay-safe tracer provider (deterministic ids, nothing emitted again while
replaying); with any other provider workflow code makes none, so a replay cannot report a pass twice.

**Metrics**, through ``workflow.metric_meter()``, which records nothing while replaying:
``llmisvc_router_passes_total`` and ``llmisvc_router_pass_duration_seconds`` (workflow time), both by
``outcome`` (the exporter adds the ``_total`` and ``_seconds`` suffixes).

Neither adds a command to the history: the committed histories replay unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, NonRecordingSpan, Span, SpanContext, StatusCode, Tracer
from temporalio import workflow
from temporalio.common import MetricCounter, MetricHistogramTimedelta
from temporalio.contrib.opentelemetry import ReplaySafeTracerProvider

from activities.models import ServiceKey
from workflows.models import PassSummary

PASS_SPAN = "reconcile pass"
NAMESPACE = "llmisvc.namespace"
NAME = "llmisvc.name"
GENERATION = "llmisvc.generation"
OUTCOME = "llmisvc.outcome"
REASONS = "llmisvc.reasons"
PASSES_METRIC = "llmisvc_router_passes"
DURATION_METRIC = "llmisvc_router_pass_duration"


class ObservedPass:
    """The pass being run: its span, and the outcome once known."""

    def __init__(self, span: Span) -> None:
        self.span = span
        self.outcome: str | None = None

    def finished(self, summary: PassSummary) -> None:
        self.outcome = summary.outcome
        self.span.set_attribute(OUTCOME, summary.outcome)
        if summary.outcome == "error":
            self.span.set_status(StatusCode.ERROR, summary.message)


class PassTelemetry:
    def __init__(self, key: ServiceKey) -> None:
        self._key = key
        self._triggers: list[SpanContext] = []  # the traces of the signals and updates since the last pass
        self._passes: MetricCounter | None = None
        self._durations: MetricHistogramTimedelta | None = None

    def note_trigger(self) -> None:
        """From a signal or update handler: remember the sender's trace, if it sent one."""
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            self._triggers.append(context)

    @contextmanager
    def observe(self, reasons: list[str]) -> Iterator[ObservedPass]:
        """Run a pass inside its span; record the metrics when it ends with an outcome."""
        triggers, self._triggers = self._triggers, []
        parent = trace.set_span_in_context(NonRecordingSpan(triggers[0])) if triggers else Context()
        attributes = {NAMESPACE: self._key.namespace, NAME: self._key.name, REASONS: reasons}
        started = workflow.now()
        span = _tracer().start_span(
            PASS_SPAN, context=parent, links=[Link(t) for t in triggers[1:]], attributes=attributes
        )
        observed = ObservedPass(span)
        with _current(span):
            yield observed
        if observed.outcome is not None:
            self._record(observed.outcome, workflow.now() - started)

    def _record(self, outcome: str, duration: timedelta) -> None:
        if self._passes is None or self._durations is None:
            meter = workflow.metric_meter()
            self._passes = meter.create_counter(PASSES_METRIC, "Reconcile passes by outcome")
            self._durations = meter.create_histogram_timedelta(
                DURATION_METRIC, "Duration of reconcile passes by outcome, in seconds", unit="s"
            )
        self._passes.add(1, {"outcome": outcome})
        self._durations.record(duration, {"outcome": outcome})


def note_generation(generation: int | None) -> None:
    """Put the service's ``metadata.generation`` on the current pass's span, once the pass read it."""
    if generation is not None:
        trace.get_current_span().set_attribute(GENERATION, generation)


@contextmanager
def _current(span: Span) -> Iterator[None]:
    """``span`` current for the block (the activities started in it carry it), and ended after it.

    Not ``opentelemetry.trace.use_span``: a worker that evicts a workflow in the middle of a pass closes
    the block (``GeneratorExit``) outside the workflow's context, where detaching fails noisily and
    ending the span would emit a partial copy of the one the replay that resumes the pass emits."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield
    except GeneratorExit:
        raise  # evicted: the replay elsewhere makes this span again, with the same id, and ends it
    except BaseException as err:
        span.record_exception(err)
        otel_context.detach(token)
        span.end()
        raise
    otel_context.detach(token)
    span.end()


def _tracer() -> Tracer:
    provider = trace.get_tracer_provider()
    if isinstance(provider, ReplaySafeTracerProvider):
        return provider.get_tracer(__name__)
    return trace.NoOpTracer()
