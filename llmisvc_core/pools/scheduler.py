"""The scheduler pieces the router depends on (spec 3.3): the EPP Service, the managed InferencePools (v1 and
v1alpha2), ``TokenizerReady`` (:mod:`llmisvc_core.pools.tokenizer`) and ``SchedulerWorkloadReady`` derived
from the tokenizer and scheduler Deployments.

Scope: the scheduler Deployment, its ServiceAccount and RBAC belong to the workload reconciler; the router
reads the Deployment for ``SchedulerWorkloadReady`` and never writes it (docs/deviations.md). Only the pool
versions whose CRDs are served are reconciled (decision P3).
"""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.errors import StepFailedError
from llmisvc_core.models.core_objects import Deployment, Service, ServicePort, ServiceSpec
from llmisvc_core.models.inference_pool import (
    EmptyTargetPortsError,
    InferencePool,
    InferencePoolSpec,
    InferencePoolV1Alpha2,
    to_v1alpha2_spec,
)
from llmisvc_core.models.kube import DEPLOYMENT, POOL_V1, POOL_V1ALPHA2, SERVICE, ObjectMeta
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.pools.scheduler_workload import mark_scheduler_workload
from llmisvc_core.pools.tokenizer import mark_tokenizer
from llmisvc_core.world import conditions, writes
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.snapshot import PassWorld

EPP_PORT_NAMES = ("grpc", "grpc-health", "metrics", "zmq")


class SchedulerError(StepFailedError):
    """The scheduler step failed (exit X11)."""


def is_managed(svc: LLMInferenceService) -> bool:
    """R-SCH-1: the router owns the scheduler's Service and pools."""
    scheduler = svc.scheduler()
    return (
        not svc.is_stopped()
        and scheduler is not None
        and scheduler.template is not None
        and not scheduler.has_pool_ref()
    )


def reconcile_scheduler(conds: Conditions, world: PassWorld, svc: LLMInferenceService) -> None:
    """R-SCH-2 order (with KServe #5712's tokenizer first): tokenizer and scheduler Deployment conditions,
    EPP Service, pool v1, pool v1alpha2, Stopped pool condition."""
    managed = is_managed(svc)
    try:
        mark_tokenizer(conds, world, svc)
        _mark_workload(conds, world, svc, managed)
        _reconcile_epp_service(world, svc, managed)
        _reconcile_pool_v1(world, svc, managed)
        _reconcile_pool_v1alpha2(world, svc, managed)
    except (writes.WriteError, EmptyTargetPortsError) as err:
        raise SchedulerError(str(err)) from err
    if svc.is_stopped():
        conditions.mark_stopped(conds, conditions.INFERENCE_POOL_READY)


def _mark_workload(conds: Conditions, world: PassWorld, svc: LLMInferenceService, managed: bool) -> None:
    if managed:
        name = naming.scheduler_name(svc.name)
        mark_scheduler_workload(conds, world.read(Deployment, DEPLOYMENT, svc.namespace, name))
    elif svc.is_stopped():
        conditions.mark_stopped(conds, conditions.SCHEDULER_WORKLOAD_READY)
    else:
        conds.unset(conditions.SCHEDULER_WORKLOAD_READY)


def _owned_meta(svc: LLMInferenceService, name: str) -> ObjectMeta:
    return ObjectMeta(
        name=name,
        namespace=svc.namespace,
        labels=naming.scheduler_labels(svc.name),
        owner_references=[svc.controller_reference()],
    )


def expected_epp_service(svc: LLMInferenceService) -> Service:
    """R-SCH-5: one port per well-known container port name, sorted by name."""
    ports: dict[str, ServicePort] = {}
    scheduler = svc.scheduler()
    template = scheduler.template if scheduler is not None else None
    for container in (template.containers if template is not None else None) or []:
        for port in container.ports or []:
            if port.name in EPP_PORT_NAMES:
                ports[port.name] = ServicePort(
                    name=port.name, port=port.container_port, target_port=port.name, protocol=port.protocol
                )
    return Service(
        metadata=_owned_meta(svc, svc.epp_service_name()),
        spec=ServiceSpec(ports=[ports[n] for n in sorted(ports)], selector=naming.scheduler_labels(svc.name)),
    )


def _pool_spec(svc: LLMInferenceService) -> InferencePoolSpec | None:
    scheduler = svc.scheduler()
    if scheduler is None or scheduler.pool is None or scheduler.pool.spec is None:
        return None
    return scheduler.pool.spec.model_copy(deep=True)


def expected_pool_v1(svc: LLMInferenceService) -> InferencePool:
    """R-SCH-6: a copy of ``scheduler.pool.spec`` under the managed name."""
    return InferencePool(
        metadata=_owned_meta(svc, svc.managed_pool_name()), spec=_pool_spec(svc) or InferencePoolSpec()
    )


def expected_pool_v1alpha2(svc: LLMInferenceService) -> InferencePoolV1Alpha2:
    """R-SCH-7: the v1 spec converted to the v1alpha2 layout (no spec when the service has none)."""
    pool = InferencePoolV1Alpha2(metadata=_owned_meta(svc, svc.managed_pool_name()))
    spec = _pool_spec(svc)
    if spec is not None:
        try:
            pool.spec = to_v1alpha2_spec(spec)
        except EmptyTargetPortsError as err:
            raise EmptyTargetPortsError(
                f"failed to convert InferencePool {svc.namespace}/{svc.managed_pool_name()} to v1alpha2: "
                "spec.router.scheduler.pool.spec.targetPorts is empty (at least one target port is required)"
            ) from err
    return pool


def _reconcile_epp_service(world: PassWorld, svc: LLMInferenceService, managed: bool) -> None:
    if managed:
        writes.reconcile(world, svc, SERVICE, expected_epp_service(svc))
    else:
        writes.delete(world, svc, SERVICE, svc.namespace, svc.epp_service_name())


def _reconcile_pool_v1(world: PassWorld, svc: LLMInferenceService, managed: bool) -> None:
    if managed and world.is_installed(POOL_V1):
        writes.reconcile(world, svc, POOL_V1, expected_pool_v1(svc))
    else:
        writes.delete(world, svc, POOL_V1, svc.namespace, svc.managed_pool_name())


def _reconcile_pool_v1alpha2(world: PassWorld, svc: LLMInferenceService, managed: bool) -> None:
    if managed and world.is_installed(POOL_V1ALPHA2):
        writes.reconcile(world, svc, POOL_V1ALPHA2, expected_pool_v1alpha2(svc))
    else:
        writes.delete(world, svc, POOL_V1ALPHA2, svc.namespace, svc.managed_pool_name())
