"""The custom search attributes each service's workflow keeps up to date, so the Temporal UI can answer
"which services in namespace X are not ready" with a query such as
``LlmisvcNamespace = "llm" AND LlmisvcRouterReady != "True"``."""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

NAMESPACE = SearchAttributeKey.for_keyword("LlmisvcNamespace")
NAME = SearchAttributeKey.for_keyword("LlmisvcName")
ROUTER_READY = SearchAttributeKey.for_keyword("LlmisvcRouterReady")  # True / False / Unknown
OUTCOME = SearchAttributeKey.for_keyword("LlmisvcOutcome")  # reconciled, precondition-not-met, …
#: Shadow mode: the objects whose live state differs from what the router would write (``LlmisvcDrift > 0``).
DRIFT = SearchAttributeKey.for_int("LlmisvcDrift")

ALL = (NAMESPACE, NAME, ROUTER_READY, OUTCOME, DRIFT)
