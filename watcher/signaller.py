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

from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError, RPCStatusCode

from watcher.model import ServiceSignal
from workflows.models import ReconcileSignal, ServiceWorkflowInput, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow


class Signaller(Protocol):
    async def send(self, signal: ServiceSignal) -> None:
        """Deliver one signal; raise if it may not have been delivered (the caller retries)."""
        ...


class TemporalSignaller:
    def __init__(self, client: Client, task_queue: str, resync_seconds: int) -> None:
        self._client = client
        self._task_queue = task_queue
        self._resync_seconds = resync_seconds

    async def send(self, signal: ServiceSignal) -> None:
        if signal.start:
            await self._start(signal)
        else:
            await self._signal(signal)

    async def _start(self, signal: ServiceSignal) -> None:
        await self._client.start_workflow(
            LLMInferenceServiceWorkflow.run,
            ServiceWorkflowInput(
                namespace=signal.namespace, name=signal.name, resync_seconds=self._resync_seconds
            ),
            id=workflow_id(signal.namespace, signal.name),
            task_queue=self._task_queue,
            start_signal="reconcile",
            start_signal_args=[ReconcileSignal(reason=signal.reason)],
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        )

    async def _signal(self, signal: ServiceSignal) -> None:
        handle = self._client.get_workflow_handle(workflow_id(signal.namespace, signal.name))
        try:
            await handle.signal(LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason=signal.reason))
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
