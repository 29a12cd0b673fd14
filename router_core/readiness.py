"""Condition evaluation of the router pass (spec 3.8 and R-SCH-4): one import for the pass's steps 6-8.

The rules live in :mod:`router_core.route_readiness` (GatewaysReady, HTTPRoutesReady) and
:mod:`router_core.pool_readiness` (InferencePoolReady, ``status.router.scheduler``,
SchedulerWorkloadReady). Every evaluator writes through :class:`~router_core.conditions.Conditions` and
judges only objects the caller has read; ``None`` stands for "not found" or "kind not installed".
"""

from __future__ import annotations

from router_core.pool_readiness import (
    evaluate_external_pool,
    evaluate_managed_pools,
    evaluate_pools,
    is_pool_ready,
    is_pool_ready_for_gateways,
    mark_scheduler_workload,
    scheduler_workload_verdict,
    set_scheduler_status,
)
from router_core.route_readiness import (
    evaluate_gateways,
    evaluate_http_routes,
    find_non_ready_condition,
    is_gateway_ready,
    is_http_route_ready,
    mark_http_route_fetch_error,
)

__all__ = [
    "evaluate_external_pool",
    "evaluate_gateways",
    "evaluate_http_routes",
    "evaluate_managed_pools",
    "evaluate_pools",
    "find_non_ready_condition",
    "is_gateway_ready",
    "is_http_route_ready",
    "is_pool_ready",
    "is_pool_ready_for_gateways",
    "mark_http_route_fetch_error",
    "mark_scheduler_workload",
    "scheduler_workload_verdict",
    "set_scheduler_status",
]
