"""Model-based routing of the managed HTTPRoute (spec R-EXP-3..6, R-EXP-8): whether it is on, the LoRA
adapter copies of the model-header matches when it is, and stripping those matches when it is not.

A match is a *model-routing match* when it tests the configured model header; URL discovery uses the same
test to tell model-routing paths from path-based ones (:mod:`llmisvc_core.urls.discovery`).
"""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.models.gateway_api import Gateway, HTTPRouteMatch, HTTPRouteRule
from llmisvc_core.models.llmisvc import MODEL_BASED_ROUTING_ANNOTATION, LLMInferenceService
from llmisvc_core.world.config import ModelRoutingMode, RouterConfig

ENABLED_VALUE = "true"
GATEWAY_OPT_OUT_VALUE = "false"


def is_model_routing_match(match: HTTPRouteMatch, header_name: str) -> bool:
    """R-EXP-8: the match tests the configured model header (exact, case-sensitive name, quirk Q28)."""
    if not header_name:
        return False
    return any(header.name == header_name for header in match.headers or [])


def is_model_based_routing_enabled(
    svc: LLMInferenceService, config: RouterConfig, referenced_gateways: list[Gateway] | None
) -> bool:
    """R-EXP-3: whether the managed route keeps (and expands) its model-header matches.

    ``referenced_gateways`` is the R-EXP-4 collection made by the caller; ``None`` means that collection
    failed, which KServe treats as "enabled". The collection is empty for a service without
    ``gateway.refs``, so such a service is never opted out by a gateway annotation (quirk Q11).
    """
    if not config.model_based_routing_header_name:
        return False
    if (svc.spec.annotations or {}).get(MODEL_BASED_ROUTING_ANNOTATION) != ENABLED_VALUE:
        return False
    if config.model_based_routing_mode is ModelRoutingMode.DISABLED:
        return False
    if config.model_based_routing_mode is ModelRoutingMode.FORCED or referenced_gateways is None:
        return True
    return not any(_is_opted_out(gateway) for gateway in referenced_gateways)


def _is_opted_out(gateway: Gateway) -> bool:
    return (gateway.metadata.annotations or {}).get(MODEL_BASED_ROUTING_ANNOTATION) == GATEWAY_OPT_OUT_VALUE


def expand_lora_adapter_matches(
    rules: list[HTTPRouteRule], namespace: str, adapters: list[str], header_name: str
) -> list[HTTPRouteRule]:
    """R-EXP-5: after each rule's own matches, one copy of every model-header match per adapter.

    Copies are grouped by original match, then by adapter name in byte order whatever the spec's order
    (``[m0, m1]`` with adapters ``[b, a]`` gives ``[m0, m1, m0@a, m0@b, m1@a, m1@b]``; KServe sorts them
    since #5822, so the route does not change when adapters are reordered); in a copy every header named
    ``header_name`` carries ``publishers/<namespace>/models/<adapter>``. Matches within a rule are OR'd, so
    adapter requests reach the same backend as the base model.
    """
    result = [rule.model_copy(deep=True) for rule in rules]
    if not header_name or not adapters:
        return result
    # Python orders str by code point, which for UTF-8 is Go's byte order (strings.Compare).
    adapters = sorted(adapters)
    for rule in result:
        copies = [
            _with_model_header(match, header_name, naming.publisher_model(namespace, adapter))
            for match in rule.matches or []
            if is_model_routing_match(match, header_name)
            for adapter in adapters
        ]
        if copies:
            rule.matches = [*(rule.matches or []), *copies]
    return result


def _with_model_header(match: HTTPRouteMatch, header_name: str, value: str) -> HTTPRouteMatch:
    copy = match.model_copy(deep=True)
    for header in copy.headers or []:
        if header.name == header_name:
            header.value = value
    return copy


def strip_model_based_routing_rules(
    rules: list[HTTPRouteRule] | None, header_name: str
) -> list[HTTPRouteRule] | None:
    """R-EXP-6: drop the model-header matches, and every rule left without a match.

    A rule that had no matches at all is dropped too (quirk Q12), although the API server would have
    given it a catch-all ``PathPrefix /`` match. With an empty header name the rules are kept as they
    are. When nothing remains the result is ``None`` (the list is omitted, as Go's nil slice).
    """
    if not header_name:
        return None if rules is None else [rule.model_copy(deep=True) for rule in rules]
    kept_rules: list[HTTPRouteRule] = []
    for rule in rules or []:
        kept = [m for m in rule.matches or [] if not is_model_routing_match(m, header_name)]
        if kept:
            kept_rules.append(
                rule.model_copy(deep=True, update={"matches": [m.model_copy(deep=True) for m in kept]})
            )
    return kept_rules or None
