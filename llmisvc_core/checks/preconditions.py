"""Platform preconditions (spec 3.1 and decision P2): are the API kinds this service needs served?

A missing CRD is not something retrying fixes. The pass reports it in ``HTTPRoutesReady`` with reason
``GatewayPreconditionNotMet`` and ends without error; the orchestrator runs the pass again when a CRD
appears.
"""

from __future__ import annotations

from llmisvc_core.models.kube import GATEWAY, GATEWAYCLASS, HTTPROUTE, POOL_V1, POOL_V1ALPHA2, ResourceType
from llmisvc_core.models.llmisvc import LLMInferenceService

REASON = "GatewayPreconditionNotMet"
NOT_MET = "precondition not met"
GATEWAY_API_TYPES = (HTTPROUTE, GATEWAY, GATEWAYCLASS)


def missing_requirements(svc: LLMInferenceService, installed: frozenset[ResourceType]) -> list[str]:
    """Names of the required resources that are not served, in a stable order; empty when all are."""
    router = svc.spec.router
    if router is None or svc.is_stopped():
        # A stopped service only deletes, and deleting a kind that is not installed is a no-op.
        return []
    required: list[str] = []
    if router.route is not None or router.gateway is not None:
        required += [str(t) for t in GATEWAY_API_TYPES if t not in installed]
    managed = router.scheduler is not None and router.scheduler.template is not None
    if svc.pool_has_ref() and POOL_V1 not in installed:
        required.append(str(POOL_V1))
    elif managed and not svc.pool_has_ref() and not installed & {POOL_V1, POOL_V1ALPHA2}:
        required.append(f"{POOL_V1} or {POOL_V1ALPHA2}")
    return required


def not_met_message(missing: list[str]) -> str:
    """The condition message: which resources to install, ending like KServe's sentinel error."""
    return f"required CRDs are not installed: {', '.join(missing)}: {NOT_MET}"
