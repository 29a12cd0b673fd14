"""The custom search attributes each service's workflow keeps up to date, so the Temporal UI can answer
"which services in namespace X are not ready" with a query such as
``LlmisvcNamespace = "llm" AND LlmisvcRouterReady != "True"``."""

from __future__ import annotations

from typing import Any

from temporalio.common import SearchAttributeIndexedValueType, SearchAttributeKey

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
