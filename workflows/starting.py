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


async def registered_search_attributes(client: Client) -> set[str]:
    """The names of the custom search attributes registered in the namespace with the type the workflow
    gives them (none when they cannot be listed).

    Setting one that is not registered, or registered with another type, fails the workflow task (or the
    start), so a workflow only sets those its starter found registered (``llmisvc-router
    register-search-attributes`` adds them)."""
    try:
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace)
        )
    except RPCError:
        return set()
    registered = listed.custom_attributes
    return {
        key.name for key in search_attributes.ALL if registered.get(key.name) == key.indexed_value_type.value
    }


async def search_attributes_registered(client: Client) -> bool:
    """True when the namespace has every search attribute the workflow keeps up to date."""
    registered = await registered_search_attributes(client)
    return all(key.name in registered for key in search_attributes.KEPT)


class WorkflowStarter:
    """Starts the workflows of one install: its task queue, resync period and cluster name (``""``: none;
    the workflow ids and ``LlmisvcCluster`` carry it, :func:`workflows.models.workflow_id`)."""

    def __init__(
        self,
        client: Client,
        task_queue: str,
        resync_seconds: int,
        with_search_attributes: bool,
        cluster: str = "",
        with_cluster_attribute: bool = False,
    ) -> None:
        self.client = client
        self.task_queue = task_queue
        self.resync_seconds = resync_seconds
        self.with_search_attributes = with_search_attributes
        self.cluster = cluster
        self.with_cluster_attribute = with_cluster_attribute and bool(cluster)

    @classmethod
    async def create(
        cls, client: Client, task_queue: str, resync_seconds: int, cluster: str = ""
    ) -> WorkflowStarter:
        registered = await registered_search_attributes(client)
        kept = all(key.name in registered for key in search_attributes.KEPT)
        return cls(
            client, task_queue, resync_seconds, kept, cluster, search_attributes.CLUSTER.name in registered
        )

    def workflow_id(self, namespace: str, name: str) -> str:
        return workflow_id(namespace, name, self.cluster)

    def workflow_input(self, namespace: str, name: str) -> ServiceWorkflowInput:
        return ServiceWorkflowInput(
            namespace=namespace,
            name=name,
            resync_seconds=self.resync_seconds,
            search_attributes=self.with_search_attributes,
            drift_attribute=self.with_search_attributes,
        )

    def options(self, namespace: str, name: str) -> dict[str, Any]:
        where = f" in cluster {self.cluster}" if self.cluster else ""
        options: dict[str, Any] = {
            "id": self.workflow_id(namespace, name),
            "task_queue": self.task_queue,
            "id_reuse_policy": WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            "static_summary": f"LLMInferenceService {namespace}/{name}{where}",
            "static_details": descriptions.static_details(namespace, name),
        }
        pairs: list[SearchAttributePair[str]] = []
        if self.with_search_attributes:
            pairs += [
                SearchAttributePair(search_attributes.NAMESPACE, namespace),
                SearchAttributePair(search_attributes.NAME, name),
            ]
        if self.with_cluster_attribute:
            pairs.append(SearchAttributePair(search_attributes.CLUSTER, self.cluster))
        if pairs:
            options["search_attributes"] = TypedSearchAttributes(pairs)
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
