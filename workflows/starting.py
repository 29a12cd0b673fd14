"""Starting a service's workflow the same way from every starter (the watcher, the CLI, the tests):
its ID, task queue, reuse policy, the summary shown in the Temporal UI and the search attributes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.service import RPCError

from workflows import descriptions, search_attributes
from workflows.models import ServiceWorkflowInput, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow


async def search_attributes_registered(client: Client) -> bool:
    """True when the namespace has every custom search attribute the workflow sets, with its type.

    Setting one that is not registered, or registered with another type, fails the workflow task, so a
    workflow only sets them when its starter found them registered (``llmisvc-router
    register-search-attributes`` adds them)."""
    try:
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace)
        )
    except RPCError:
        return False
    registered = listed.custom_attributes
    return all(registered.get(key.name) == key.indexed_value_type.value for key in search_attributes.ALL)


class WorkflowStarter:
    def __init__(
        self, client: Client, task_queue: str, resync_seconds: int, with_search_attributes: bool
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self.resync_seconds = resync_seconds
        self.with_search_attributes = with_search_attributes

    @classmethod
    async def create(cls, client: Client, task_queue: str, resync_seconds: int) -> WorkflowStarter:
        return cls(client, task_queue, resync_seconds, await search_attributes_registered(client))

    def workflow_input(self, namespace: str, name: str) -> ServiceWorkflowInput:
        return ServiceWorkflowInput(
            namespace=namespace,
            name=name,
            resync_seconds=self.resync_seconds,
            search_attributes=self.with_search_attributes,
            drift_attribute=self.with_search_attributes,
        )

    def options(self, namespace: str, name: str) -> dict[str, Any]:
        options: dict[str, Any] = {
            "id": workflow_id(namespace, name),
            "task_queue": self.task_queue,
            "id_reuse_policy": WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            "static_summary": f"LLMInferenceService {namespace}/{name}",
            "static_details": descriptions.static_details(namespace, name),
        }
        if self.with_search_attributes:
            options["search_attributes"] = TypedSearchAttributes(
                [
                    SearchAttributePair(search_attributes.NAMESPACE, namespace),
                    SearchAttributePair(search_attributes.NAME, name),
                ]
            )
        return options

    async def signal_with_start(
        self, namespace: str, name: str, signal: str, args: Sequence[Any] = ()
    ) -> None:
        """Start the workflow if it is not running (a finished run of a recreated service included) and
        deliver ``signal`` to it either way."""
        await self.client.start_workflow(
            LLMInferenceServiceWorkflow.run,
            self.workflow_input(namespace, name),
            start_signal=signal,
            start_signal_args=list(args),
            **self.options(namespace, name),
        )
