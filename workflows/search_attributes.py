"""The custom search attributes each service's workflow keeps up to date, so the Temporal UI can answer
"which services in namespace X are not ready" with a query such as
``LlmisvcNamespace = "llm" AND LlmisvcRouterReady != "True"``."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeIndexedValueType, SearchAttributeKey, SearchAttributeUpdate

from llmisvc_core.planner.plan import Outcome
from workflows.models import PassSummary, ServiceWorkflowInput, WorkflowState

NAMESPACE = SearchAttributeKey.for_keyword("LlmisvcNamespace")
NAME = SearchAttributeKey.for_keyword("LlmisvcName")
ROUTER_READY = SearchAttributeKey.for_keyword("LlmisvcRouterReady")  # True / False / Unknown
OUTCOME = SearchAttributeKey.for_keyword("LlmisvcOutcome")  # reconciled, precondition-not-met, …
#: Shadow mode: the objects whose live state differs from what the router would write (``LlmisvcDrift > 0``).
DRIFT = SearchAttributeKey.for_int("LlmisvcDrift")

#: True while the last pass could not complete (outcome ``error``: an API that kept failing, writes that
#: kept conflicting, or a fault of the workflow's own code); ``LlmisvcPassFailing = true`` finds them.
PASS_FAILING = SearchAttributeKey.for_bool("LlmisvcPassFailing")

#: The cluster name of the install that started the workflow (``LLMISVC_ROUTER_CLUSTER``), so that one
#: Temporal namespace shared by several clusters has a view per cluster: ``LlmisvcCluster = "eu-1"``.
#: Set when the workflow starts, never by the workflow (continue-as-new carries it over); absent on the
#: workflows of an install without a cluster name.
CLUSTER = SearchAttributeKey.for_keyword("LlmisvcCluster")

#: The ones the workflow keeps up to date (its input's ``search_attributes`` and ``drift_attribute``).
KEPT = (NAMESPACE, NAME, ROUTER_READY, OUTCOME, DRIFT, PASS_FAILING)
#: Every one ``llmisvc-router register-search-attributes`` adds.
ALL = (*KEPT, CLUSTER)


def cli_type(key: SearchAttributeKey[Any]) -> str:
    """The type as ``temporal server start-dev --search-attribute NAME=TYPE`` spells it (``Keyword``,
    ``Bool``): registering one with another type than the workflow sets fails its workflow tasks."""
    name = key.indexed_value_type.name
    return (
        "KeywordList"
        if key.indexed_value_type == SearchAttributeIndexedValueType.KEYWORD_LIST
        else name.title()
    )


def publish(request: ServiceWorkflowInput, state: WorkflowState, summary: PassSummary) -> None:
    """Workflow code, after each pass: bring the ones the workflow keeps up to date (:data:`KEPT`), so the
    Temporal UI can filter services by namespace, name, readiness, outcome and drift."""
    if not request.search_attributes:
        return
    values = {NAMESPACE: request.namespace, NAME: request.name, ROUTER_READY: summary.router_ready,
              OUTCOME: summary.outcome.value}  # fmt: skip
    current = workflow.info().typed_search_attributes
    changed: list[SearchAttributeUpdate[Any]] = [
        key.value_set(value) for key, value in values.items() if current.get(key) != value
    ]
    drift = state.drift
    if request.drift_attribute and drift is not None and current.get(DRIFT) != drift.drift:
        # Only once shadow mode ran, so the histories of write-only workflows replay unchanged.
        changed.append(DRIFT.value_set(drift.drift))
    failing = summary.outcome == Outcome.ERROR
    was_failing = current.get(PASS_FAILING)
    if request.drift_attribute and (failing or was_failing) and was_failing != failing:
        # Set once a pass failed, so the histories of passes that never failed replay unchanged.
        changed.append(PASS_FAILING.value_set(failing))
    if changed:  # an unchanged value would only add an event to the history
        workflow.upsert_search_attributes(changed)
