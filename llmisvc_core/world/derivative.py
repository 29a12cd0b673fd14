"""Semantic equality of a desired object and its live copy (spec 3.5.1 R-CRUD-3/4, Appendix B).

KServe decides whether to update a managed object with apimachinery's ``DeepDerivative``: every value the
desired object *sets* must be found in the live object, and whatever the desired object leaves unset is
ignored. That keeps the controller from fighting other writers (extra labels, annotations, status-adjacent
fields), at the price of never propagating a removal of trailing list items (quirk Q4).

Because this port does not send a dry-run request, the Gateway API server defaults are applied to the
desired HTTPRoute locally (:func:`http_route_with_defaults`) before the comparison (R-CRUD-4).
"""

from __future__ import annotations

from typing import Any

from llmisvc_core.models.gateway_api import (
    HTTPBackendRef,
    HTTPPathMatch,
    HTTPRoute,
    HTTPRouteMatch,
    HTTPRouteRule,
)
from llmisvc_core.models.kube import GATEWAY_GROUP
from llmisvc_core.naming import ROUTING_GROUP_LABEL

PATH_PREFIX = "PathPrefix"
EXACT = "Exact"
ROOT_PATH = "/"


def deep_derivative(expected: Any, current: Any) -> bool:
    """Whether ``current`` is a derivative of ``expected`` (Appendix B), on JSON-shaped values.

    ``None``, ``""``, ``[]`` and ``{}`` in ``expected`` are ignored; a list compares as a prefix of the
    live list; a map compares as a subset of the live map; numbers and booleans compare exactly, zero
    included.
    """
    if expected is None or (isinstance(expected, str | list | dict) and len(expected) == 0):
        return True
    if isinstance(expected, dict):
        return isinstance(current, dict) and _is_map_derivative(expected, current)
    if isinstance(expected, list):
        return isinstance(current, list) and _is_list_derivative(expected, current)
    if isinstance(expected, bool) or isinstance(current, bool):
        # bool is an int in Python; JSON keeps them apart, and so must we (true != 1).
        return isinstance(expected, bool) and isinstance(current, bool) and expected == current
    if isinstance(expected, int | float):
        return isinstance(current, int | float) and expected == current
    return bool(expected == current)


def _is_list_derivative(expected: list[Any], current: list[Any]) -> bool:
    if len(expected) > len(current):
        return False
    return all(deep_derivative(e, c) for e, c in zip(expected, current, strict=False))


def _is_map_derivative(expected: dict[str, Any], current: dict[str, Any]) -> bool:
    """Map subset: every key set in ``expected`` must be in ``current``, even with an empty string value.

    Go requires the key of a map entry to exist whatever its value (labels ``{"a": ""}`` differ from
    ``{}``). A JSON object can also be a Go struct, whose empty fields are ignored; keys whose value is
    ``None``, ``[]`` or ``{}`` are therefore skipped — the server drops such values (``omitempty``), and
    requiring them would make every comparison fail and the route be rewritten on every pass.
    """
    for key, value in expected.items():
        if value is None or (isinstance(value, list | dict) and len(value) == 0):
            continue
        if key not in current or not deep_derivative(value, current[key]):
            return False
    return True


def semantically_equal(expected: dict[str, Any], current: dict[str, Any]) -> bool:
    """R-CRUD-3 on wire objects: DeepDerivative of the spec, the labels and the annotations."""
    expected_meta = expected.get("metadata") or {}
    current_meta = current.get("metadata") or {}
    return (
        deep_derivative(expected.get("spec"), current.get("spec"))
        and deep_derivative(expected_meta.get("labels"), current_meta.get("labels"))
        and deep_derivative(expected_meta.get("annotations"), current_meta.get("annotations"))
    )


#: Labels only the router sets: one on the live object that the desired object lacks is stale (#5798).
CONTROLLER_MANAGED_LABELS = (ROUTING_GROUP_LABEL,)


def http_route_equal(expected: dict[str, Any], current: dict[str, Any]) -> bool:
    """KServe's ``semanticHTTPRouteIsEqual`` since #5798: R-CRUD-3, except that a grouped route (its
    desired labels name a routing group) compares its rules exactly, so a departed member's backend is
    removed, and that a controller-managed label on the live route the desired one lacks forces an
    update (a service that left its group)."""
    expected_meta = expected.get("metadata") or {}
    current_meta = current.get("metadata") or {}
    expected_labels = expected_meta.get("labels") or {}
    current_labels = current_meta.get("labels") or {}
    if ROUTING_GROUP_LABEL in expected_labels:
        spec, live = expected.get("spec") or {}, current.get("spec") or {}
        spec_equal = (
            spec.get("rules") == live.get("rules")
            and deep_derivative(spec.get("parentRefs"), live.get("parentRefs"))
            and deep_derivative(spec.get("hostnames"), live.get("hostnames"))
        )
    else:
        spec_equal = deep_derivative(expected.get("spec"), current.get("spec"))
    stale = any(k in current_labels and k not in expected_labels for k in CONTROLLER_MANAGED_LABELS)
    return (
        spec_equal
        and deep_derivative(expected_labels, current_labels)
        and not stale
        and deep_derivative(expected_meta.get("annotations"), current_meta.get("annotations"))
    )


def http_route_with_defaults(route: HTTPRoute) -> HTTPRoute:
    """A copy of ``route`` with the Gateway API (v1.5.1 CRD) defaults the API server would add (R-CRUD-4).

    Absent ``rules`` and ``matches`` are defaulted like Go's ``omitempty`` sends them: an empty list is
    absent on the wire, so it gets the default too.
    """
    result = route.model_copy(deep=True)
    spec = result.spec
    for parent in spec.parent_refs or []:
        parent.group = GATEWAY_GROUP if parent.group is None else parent.group
        parent.kind = "Gateway" if parent.kind is None else parent.kind
    if not spec.rules:
        spec.rules = [HTTPRouteRule()]
    for rule in spec.rules:
        _default_rule(rule)
    return result


def _default_rule(rule: HTTPRouteRule) -> None:
    if not rule.matches:
        rule.matches = [HTTPRouteMatch()]
    for match in rule.matches:
        _default_match(match)
    for ref in rule.backend_refs or []:
        _default_backend_ref(ref)


def _default_match(match: HTTPRouteMatch) -> None:
    if match.path is None:
        match.path = HTTPPathMatch()
    match.path.type = PATH_PREFIX if match.path.type is None else match.path.type
    match.path.value = ROOT_PATH if match.path.value is None else match.path.value
    for header in match.headers or []:
        header.type = EXACT if header.type is None else header.type
    for param in match.query_params or []:
        param.setdefault("type", EXACT)


def _default_backend_ref(ref: HTTPBackendRef) -> None:
    ref.group = "" if ref.group is None else ref.group
    ref.kind = "Service" if ref.kind is None else ref.kind
    ref.weight = 1 if ref.weight is None else ref.weight
