"""Steps 6-8 of the pass: InferencePoolReady, GatewaysReady and HTTPRoutesReady from what the pass sees."""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.checks.references import referenced_routes
from llmisvc_core.errors import StepFailedError
from llmisvc_core.models.gateway_api import HTTPRoute
from llmisvc_core.models.inference_pool import InferencePool, InferencePoolV1Alpha2
from llmisvc_core.models.kube import HTTPROUTE, POOL_V1, POOL_V1ALPHA2
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.readiness import gateways_and_routes, pools
from llmisvc_core.urls.discovery import ResolvedGateway, resolved_gateway_keys
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.snapshot import PassWorld


class EvaluationError(StepFailedError):
    """An evaluation that fails the pass (exit X14: the referenced InferencePool cannot be read)."""


def evaluate_pools(
    conds: Conditions, world: PassWorld, svc: LLMInferenceService, resolved: list[ResolvedGateway]
) -> None:
    """R-POOL-1..4 over the pools the pass sees (only those it needs), scoped to the gateways the pool
    serves: the routes' gateways and, decision P17 (KServe PR #5972), those of ``gateway.refs``."""
    keys = pool_gateway_keys(svc, resolved)
    scheduler = svc.scheduler()
    if svc.is_stopped() or scheduler is None:
        error = pools.evaluate_pools(conds, svc, keys)
    elif scheduler.pool is not None and scheduler.pool.ref is not None and svc.pool_has_ref():
        pool = world.read(InferencePool, POOL_V1, svc.namespace, scheduler.pool.ref.name)
        error = pools.evaluate_pools(conds, svc, keys, external_pool=pool)
    else:
        name = svc.managed_pool_name()
        v1 = world.read(InferencePool, POOL_V1, svc.namespace, name)
        v1alpha2 = world.read(InferencePoolV1Alpha2, POOL_V1ALPHA2, svc.namespace, name)
        error = pools.evaluate_pools(conds, svc, keys, v1_pool=v1, v1alpha2_pool=v1alpha2)
    if error is not None:
        raise EvaluationError(f"failed to evaluate Inference Pool conditions: {error}")


def pool_gateway_keys(svc: LLMInferenceService, resolved: list[ResolvedGateway]) -> list[tuple[str, str]]:
    """The (namespace, name) of each Gateway whose acceptance makes the pool ready, without repeats: the
    resolved gateways of the routes (R-POOL-8) and then ``spec.router.gateway.refs`` (namespace defaulting
    to the service's). KServe at ``aaac4e294`` scopes to the routes only, so a scheduler with
    ``gateway.refs`` and no route never becomes ready (Q23, KServe #5986 and #6072); PR #5972 adds the
    refs, and decision P17 adopts it."""
    keys = resolved_gateway_keys(resolved)
    router = svc.spec.router
    refs = router.gateway.refs if router is not None and router.gateway is not None else None
    keys.extend((ref.namespace or svc.namespace, ref.name) for ref in refs or [])
    return list(dict.fromkeys(keys))


def evaluate_routes(conds: Conditions, world: PassWorld, svc: LLMInferenceService) -> None:
    """R-HR-3: the referenced routes and the managed route, re-read now (after this pass's writes)."""
    found = referenced_routes(world, svc)
    if svc.http_has_spec():
        managed = world.read(HTTPRoute, HTTPROUTE, svc.namespace, naming.route_name(svc.name))
        if managed is not None:
            found.append(managed)
    gateways_and_routes.evaluate_http_routes(conds, svc, found)
