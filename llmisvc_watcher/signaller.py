"""The Temporal side of the watcher: how one :class:`~llmisvc_watcher.model.ServiceSignal` reaches a workflow.

A service the watcher sees (created, changed, found on start-up) gets signal-with-start: its workflow
is started if it is not running — a completed run of a deleted-and-recreated service included — and
signalled ``reconcile`` either way. Anything else gets a plain ``reconcile`` signal, and a workflow
that does not exist (never started, or already finished because its service is gone) is no error.
Signals only ask for a pass that re-reads the world, so sending one twice, or from two watcher
replicas, is harmless: no leader election is needed.

Each signal starts a trace (span ``signal reconcile``): the client's OpenTelemetry plugin carries its
context in the signal's headers, and the pass the signal causes continues it.
"""

from __future__ import annotations

from typing import Protocol

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind
from opentelemetry.util.types import AttributeValue
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_watcher.model import ServiceSignal
from workflows.models import ReconcileSignal
from workflows.service_workflow import LLMInferenceServiceWorkflow
from workflows.starting import WorkflowStarter

SIGNAL_SPAN = "signal reconcile"
_tracer = trace.get_tracer(__name__)  # follows the global provider, even one installed later


class Signaller(Protocol):
    async def send(self, signal: ServiceSignal) -> None:
        """Deliver one signal; raise if it may not have been delivered (the caller retries)."""
        ...


class TemporalSignaller:
    def __init__(self, starter: WorkflowStarter) -> None:
        self._starter = starter
        self._client = starter.client

    async def send(self, signal: ServiceSignal) -> None:
        attributes: dict[str, AttributeValue] = {
            "llmisvc.namespace": signal.namespace,
            "llmisvc.name": signal.name,
            "llmisvc.reason": signal.reason,
            "llmisvc.start": signal.start,
        }
        # A fresh context: one trace per signal, whatever the caller had current.
        with _tracer.start_as_current_span(
            SIGNAL_SPAN, context=Context(), kind=SpanKind.PRODUCER, attributes=attributes
        ):
            if signal.start:
                await self._start(signal)
            else:
                await self._signal(signal)

    async def _start(self, signal: ServiceSignal) -> None:
        args = [ReconcileSignal(reason=signal.reason, seen=list(signal.seen))]
        await self._starter.signal_with_start(signal.namespace, signal.name, "reconcile", args)

    async def _signal(self, signal: ServiceSignal) -> None:
        handle = self._client.get_workflow_handle(self._starter.workflow_id(signal.namespace, signal.name))
        try:
            payload = ReconcileSignal(reason=signal.reason, seen=list(signal.seen))
            await handle.signal(LLMInferenceServiceWorkflow.reconcile, payload)
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
