"""``TokenizerReady`` from the standalone tokenizer Deployment (KServe #5712, ``tokenizer.go`` at
``aaac4e294``), set by the scheduler step before ``SchedulerWorkloadReady``, as KServe's
``reconcileScheduler`` reconciles the tokenizer first.

The tokenizer Deployment and Service (``<name>-tokenizer``) belong to the workload side here, like the
scheduler Deployment (docs/deviations.md "Scope"): the router reads the Deployment's status only, and
only for a service that needs a tokenizer, so other services' passes read nothing more.
"""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.models import scheduler_plugins
from llmisvc_core.models.core_objects import Deployment
from llmisvc_core.models.kube import DEPLOYMENT
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.pools.scheduler_workload import mark_deployment_condition
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.snapshot import PassWorld


def needs_tokenizer(svc: LLMInferenceService) -> bool:
    """The negation of KServe's ``shouldDeleteTokenizer``: running, a scheduler without a pool ref, and a
    tokenizer asked for (``scheduler.tokenizer``, or a ``token-producer`` / legacy
    ``precise-prefix-cache-scorer`` plugin in the scheduler's configuration)."""
    scheduler = svc.scheduler()
    if svc.is_stopped() or scheduler is None or scheduler.has_pool_ref():
        return False
    return scheduler_plugins.is_tokenizer_enabled(scheduler.to_wire())


def mark_tokenizer(conds: Conditions, world: PassWorld, svc: LLMInferenceService) -> None:
    """``TokenizerReady`` as KServe's ``reconcileTokenizerDeployment`` sets it: ``Stopped`` for any stopped
    service, the Deployment's verdict when a tokenizer is needed, absent otherwise."""
    if svc.is_stopped():
        conditions.mark_stopped(conds, conditions.TOKENIZER_READY)
    elif needs_tokenizer(svc):
        deployment = world.read(Deployment, DEPLOYMENT, svc.namespace, naming.tokenizer_name(svc.name))
        mark_deployment_condition(conds, conditions.TOKENIZER_READY, deployment)
    else:
        conds.unset(conditions.TOKENIZER_READY)
