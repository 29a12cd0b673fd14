"""GatewaysReady and HTTPRoutesReady (spec 3.8.2, 3.8.3): are the Gateways and HTTPRoutes serving the service?

The evaluators only judge objects the caller already read: the resolved Gateways of route discovery and
the route set of R-HR-3 (referenced routes in refs order, then the managed route when it exists).
"""

from __future__ import annotations

import json

from llmisvc_core.gocompat import gofmt
from llmisvc_core.models.gateway_api import (
    Gateway,
    HTTPRoute,
    HTTPRouteStatus,
    ParentReference,
    RouteParentStatus,
)
from llmisvc_core.models.kube import Condition, find_condition
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions

PROGRAMMED = "Programmed"
ACCEPTED = "Accepted"
RESOLVED_REFS = "ResolvedRefs"

GATEWAYS_NOT_READY = "GatewaysNotReady"
HTTPROUTES_NOT_READY = "HTTPRoutesNotReady"
HTTPROUTE_FETCH_ERROR = "HTTPRouteFetchError"

#: R-HR-5: what a gateway controller that accepted a route but never reported ResolvedRefs is shown as.
MISSING_RESOLVED_REFS = Condition(
    type=RESOLVED_REFS,
    status=conditions.UNKNOWN,
    reason="ConditionMissing",
    message="ResolvedRefs condition not yet reported by gateway controller",
)


# --- GatewaysReady -------------------------------------------------------------------------------


def is_gateway_ready(gateway: Gateway) -> bool:
    """R-GW-3: the first ``Programmed`` condition decides; without one the Gateway is not ready."""
    programmed = find_condition(gateway.status.conditions if gateway.status else None, PROGRAMMED)
    return programmed is not None and programmed.status == conditions.TRUE


def evaluate_gateways(conds: Conditions, svc: LLMInferenceService, resolved_gateways: list[Gateway]) -> None:
    """R-GW-1..4 over the de-duplicated Gateways reached through the routes' parentRefs."""
    if svc.is_stopped():
        conditions.mark_stopped(conds, conditions.GATEWAYS_READY)
        return
    if svc.spec.router is None or not svc.gateway_has_refs():
        conds.unset(conditions.GATEWAYS_READY)
        return
    # Q24: only Gateways reachable through routes count, so none at all reads as ready.
    not_ready = [f"{gw.namespace}/{gw.name}" for gw in resolved_gateways if not is_gateway_ready(gw)]
    if not_ready:
        message = "The following Gateways are not ready: " + gofmt.string_list(not_ready)
        conds.mark_false(conditions.GATEWAYS_READY, GATEWAYS_NOT_READY, message)
    else:
        conds.mark_true(conditions.GATEWAYS_READY)


# --- HTTPRoutesReady -----------------------------------------------------------------------------


def is_http_route_ready(route: HTTPRoute) -> bool:
    """R-HR-4: every spec parent answered by a gateway controller, and every answer accepted and resolved."""
    parent_refs = route.spec.parent_refs or []
    if not parent_refs:
        return False
    statuses = _parent_statuses(route)
    # Each spec parent needs an entry, so an empty status.parents (R-HR-4.3) fails here already.
    if not all(_is_answered(ref, statuses, route.namespace) for ref in parent_refs):
        return False
    # Q26: entries for parents no longer in the spec are judged too; only policy entries are skipped.
    return all(_first_problem(parent, route.metadata.generation) is None for parent in statuses)


def find_non_ready_condition(route: HTTPRoute) -> Condition | None:
    """R-HR-5: the first gateway-controller condition that explains why the route is not ready."""
    for parent in _parent_statuses(route):
        problem = _first_problem(parent, route.metadata.generation)
        if problem is not None:
            return problem
    return None


def evaluate_http_routes(conds: Conditions, svc: LLMInferenceService, routes: list[HTTPRoute]) -> None:
    """R-HR-1, R-HR-2, R-HR-3 (an empty route set is ready) and R-HR-6 over the collected route set."""
    if svc.is_stopped():
        conditions.mark_stopped(conds, conditions.HTTPROUTES_READY)
        return
    if svc.route_settings() is None:
        conds.unset(conditions.HTTPROUTES_READY)
        return
    not_ready = [describe_non_ready_route(route) for route in routes if not is_http_route_ready(route)]
    if not_ready:
        message = "The following HTTPRoutes are not ready: " + gofmt.string_list(not_ready)
        conds.mark_false(conditions.HTTPROUTES_READY, HTTPROUTES_NOT_READY, message)
    else:
        conds.mark_true(conditions.HTTPROUTES_READY)


def mark_http_route_fetch_error(conds: Conditions, fetch_error: str) -> str:
    """R-HR-3: a referenced route could not be re-read (not NotFound); returns the pass's error text (X15).

    ``fetch_error`` is the collection error, e.g. ``failed to get HTTPRoute <name>/<route>: <err>``.
    """
    conds.mark_false(
        conditions.HTTPROUTES_READY,
        HTTPROUTE_FETCH_ERROR,
        f"Failed to fetch referenced HTTPRoutes: {fetch_error}",
    )
    return f"failed to fetch referenced HTTPRoutes: {fetch_error}"


def describe_non_ready_route(route: HTTPRoute) -> str:
    """One R-HR-6 item: the diagnostic condition, else (P11) compact sorted JSON of the route's status."""
    prefix = f"{route.namespace}/{route.name}: "
    cond = find_non_ready_condition(route)
    if cond is None:
        return prefix + render_status(route.status)
    return prefix + (
        f"{gofmt.status_value(cond.status)} "
        f"(reason {gofmt.quote(cond.reason or '')}, message {gofmt.quote(cond.message or '')})"
    )


def render_status(status: HTTPRouteStatus | None) -> str:
    """P11: the route status's wire form as compact JSON with sorted keys (Go dumps it with ``%#v``)."""
    wire = (status or HTTPRouteStatus()).to_wire()
    return json.dumps(wire, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- helpers ---------------------------------------------------------------------------------------


def _parent_statuses(route: HTTPRoute) -> list[RouteParentStatus]:
    return list(route.status.parents or []) if route.status is not None else []


def _is_answered(ref: ParentReference, statuses: list[RouteParentStatus], route_namespace: str) -> bool:
    """A gateway controller wrote an entry for this parent; policy controllers' entries lack ``Accepted``."""
    return any(
        ref.is_same_parent(status.parent_ref, route_namespace)
        and find_condition(status.conditions, ACCEPTED) is not None
        for status in statuses
    )


def _first_problem(parent: RouteParentStatus, generation: int | None) -> Condition | None:
    """What keeps one status entry from being ready; None when ready or not a gateway controller's entry."""
    accepted = find_condition(parent.conditions, ACCEPTED)
    if accepted is None:
        return None
    if not _is_current_true(accepted, generation):
        return accepted
    resolved = find_condition(parent.conditions, RESOLVED_REFS)
    if resolved is None:
        return MISSING_RESOLVED_REFS.model_copy()
    if not _is_current_true(resolved, generation):
        return resolved
    return None


def _is_current_true(cond: Condition, generation: int | None) -> bool:
    return cond.status == conditions.TRUE and not cond.is_stale(generation)
