"""How LoRA adapters reach the managed route's model-routing matches: the strategy of KServe #6174.

``exact`` (the default) copies every model-header match once per adapter
(:func:`llmisvc_core.httproute.model_routing.expand_lora_adapter_matches`), so a rule grows by its
model-routing matches for each adapter and hits Gateway API's 64 matches per rule after seven adapters
with KServe's route preset. ``regex`` rewrites each model-header match, in place, into one anchored
``RegularExpression`` match of the base model and every adapter, so the route keeps its size.

The cluster-wide strategy is the ingress config's ``loraModelRoutingStrategy``; a service pins its own
with the spec annotation :data:`STRATEGY_ANNOTATION`. A strategy that cannot be applied (an unsupported
annotation value that bypassed admission, or a model-header match the regex rewrite does not recognise)
raises :class:`LoRARoutingPreconditionError`; the route is then left as it is. Messages are KServe's
(``router_lora_strategy.go`` of #6174).
"""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.errors import StepFailedError
from llmisvc_core.gocompat.gofmt import quote
from llmisvc_core.httproute.model_routing import expand_lora_adapter_matches, is_model_routing_match
from llmisvc_core.models.gateway_api import HTTPHeaderMatch, HTTPRouteMatch, HTTPRouteRule
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.config import (
    CONFIGMAP_NAME,
    LORA_STRATEGY_EXACT,
    LORA_STRATEGY_REGEX,
    RouterConfig,
)

STRATEGY_ANNOTATION = "serving.kserve.io/lora-model-routing-strategy"
#: KServe's sentinel ``ErrPreconditionNotMet``, which prefixes these errors.
NOT_MET = "precondition not met"
_EXACT_TYPE = "Exact"
_REGEX_TYPE = "RegularExpression"
#: The characters Go's ``regexp.QuoteMeta`` escapes (Python's ``re.escape`` escapes more).
_RE2_SPECIAL = frozenset("\\.+*?()|[]{}^$")


class LoRARoutingPreconditionError(StepFailedError):
    """The strategy cannot be applied; retrying does not help, the spec or the ConfigMap must change."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"{NOT_MET}: {detail}")


def apply_lora_model_routing(
    rules: list[HTTPRouteRule], svc: LLMInferenceService, config: RouterConfig
) -> list[HTTPRouteRule]:
    """KServe ``applyLoRAModelRouting``: the rules with the service's adapters routed by its strategy.

    Nothing happens (and the strategy is not even read) without a named adapter or without a
    model-routing match to expand, so a bad strategy never fails a path-only route or a service
    without adapters.
    """
    model = svc.spec.model
    header = config.model_based_routing_header_name
    if model is None or model.lora is None:
        return rules
    names = _named_adapters(svc)
    if not names or not any(is_model_routing_match(m, header) for r in rules for m in r.matches or []):
        return rules
    strategy, source = strategy_for(svc, config)
    if strategy == LORA_STRATEGY_REGEX:
        return apply_regex_matches(rules, svc.namespace, svc.model_name(), names, header)
    if strategy in (LORA_STRATEGY_EXACT, ""):
        # Exact copies every adapter with a name, the empty one included (Go skips only absent names).
        return expand_lora_adapter_matches(rules, svc.namespace, svc.lora_adapter_names(), header)
    raise LoRARoutingPreconditionError(
        f"unsupported loraModelRoutingStrategy {quote(strategy)} from {source}: supported values are "
        f"{quote(LORA_STRATEGY_EXACT)} and {quote(LORA_STRATEGY_REGEX)}"
    )


def strategy_for(svc: LLMInferenceService, config: RouterConfig) -> tuple[str, str]:
    """The service's strategy (its annotation, trimmed and lower-cased, else the cluster's) and where it
    came from, so that a rejected value names the place to fix."""
    pinned = (svc.spec.annotations or {}).get(STRATEGY_ANNOTATION, "").strip()
    if pinned:
        return pinned.lower(), f"annotation {STRATEGY_ANNOTATION}"
    return config.lora_model_routing_strategy, f"the {CONFIGMAP_NAME} ConfigMap"


def regex_header_value(namespace: str, base_model: str, adapters: list[str]) -> str:
    """KServe ``loraRegexHeaderValue``: ``^publishers/<ns>/models/(<base>|<a>|…)$``, every part escaped
    as Go's ``regexp.QuoteMeta`` does, adapters sorted and de-duplicated, the base model once."""
    alternatives = [quote_meta(base_model)]
    alternatives += [quote_meta(name) for name in sorted(set(adapters)) if name != base_model]
    prefix = quote_meta(naming.publisher_model(namespace, ""))
    return f"^{prefix}({'|'.join(alternatives)})$"


def quote_meta(text: str) -> str:
    """Go's ``regexp.QuoteMeta``: a backslash before each RE2 metacharacter, nothing else changed."""
    return "".join(f"\\{ch}" if ch in _RE2_SPECIAL else ch for ch in text)


def apply_regex_matches(
    rules: list[HTTPRouteRule], namespace: str, base_model: str, adapters: list[str], header_name: str
) -> list[HTTPRouteRule]:
    """KServe ``applyLoRARegexMatches``: every model-header match that carries the base model's identity
    as an ``Exact`` value becomes one regex match; every match is checked before any is rewritten, and a
    model-header match of another shape fails the whole rewrite."""
    result = [rule.model_copy(deep=True) for rule in rules]
    if not adapters:
        return result
    base_value = naming.publisher_model(namespace, base_model)
    found: list[HTTPHeaderMatch] = []
    for rule in result:
        for index, match in enumerate(rule.matches or []):
            try:
                header = _recognised_header(match, header_name, base_value)
            except ValueError as err:
                raise LoRARoutingPreconditionError(
                    f"LoRA routing strategy {quote(LORA_STRATEGY_REGEX)} cannot be applied: rule "
                    f"{quote(rule.name or '')} match {index} {err}"
                ) from err
            if header is not None:
                found.append(header)
    pattern = regex_header_value(namespace, base_model, adapters)
    for header in found:
        header.type = _REGEX_TYPE
        header.value = pattern
    return result


def _recognised_header(match: HTTPRouteMatch, header_name: str, base_value: str) -> HTTPHeaderMatch | None:
    """The match's model header when it has the generated shape, None when it has none; ValueError (with
    KServe's text, without the rule and position) when the header cannot be rewritten."""
    found: HTTPHeaderMatch | None = None
    for header in match.headers or []:
        if not _is_model_header(header.name, header_name):
            continue
        if found is not None:
            # Gateway API evaluates only the first of several case-equivalent names.
            raise ValueError(
                f"carries multiple case-equivalent {header_name} headers; "
                "Gateway API only evaluates the first"
            )
        header_type = header.type if header.type is not None else _EXACT_TYPE
        if header_type != _EXACT_TYPE or header.value != base_value:
            raise ValueError(
                f"has an unrecognized {header.name} match (type {header_type}, value {quote(header.value)}); "
                f"expected an Exact match on the base model identity {quote(base_value)}"
            )
        found = header
    return found


def _is_model_header(name: str, header_name: str) -> bool:
    """HTTP header names compare ASCII case-insensitively here (unlike R-EXP-8's exact test)."""
    return bool(header_name) and _ascii_lower(name) == _ascii_lower(header_name)


def _ascii_lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _named_adapters(svc: LLMInferenceService) -> list[str]:
    """KServe ``loraAdapterNames``: adapter names in spec order, absent and empty ones skipped (an empty
    alternative would match the empty model identity)."""
    return [name for name in svc.lora_adapter_names() if name]
