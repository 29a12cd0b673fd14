"""The Temporal side of the watcher: how one :class:`~watcher.model.ServiceSignal` reaches a workflow.

A service the watcher sees (created, changed, found on start-up) gets signal-with-start: its workflow
is started if it is not running — a completed run of a deleted-and-recreated service included — and
signalled ``reconcile`` either way. Anything else gets a plain ``reconcile`` signal, and a workflow
that does not exist (never started, or already finished because its service is gone) is no error.
Signals only ask for a pass that re-reads the world, so sending one twice, or from two watcher
replicas, is harmless: no leader election is needed.
"""

from __future__ import annotations

from typing import Protocol

from temporalio.service import RPCError, RPCStatusCode

from watcher.model import ServiceSignal
from worker.starting import WorkflowStarter
from workflows.models import ReconcileSignal, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow


class Signaller(Protocol):
    async def send(self, signal: ServiceSignal) -> None:
        """Deliver one signal; raise if it may not have been delivered (the caller retries)."""
        ...


class TemporalSignaller:
    def __init__(self, starter: WorkflowStarter) -> None:
        self._starter = starter
        self._client = starter.client

    async def send(self, signal: ServiceSignal) -> None:
        if signal.start:
            await self._start(signal)
        else:
            await self._signal(signal)

    async def _start(self, signal: ServiceSignal) -> None:
        args = [ReconcileSignal(reason=signal.reason)]
        await self._starter.signal_with_start(signal.namespace, signal.name, "reconcile", args)

    async def _signal(self, signal: ServiceSignal) -> None:
        handle = self._client.get_workflow_handle(workflow_id(signal.namespace, signal.name))
        try:
            await handle.signal(LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason=signal.reason))
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
