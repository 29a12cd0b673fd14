"""How ``LLMInferenceServiceWorkflow`` moves between versions of its Worker Deployment.

Each run is **pinned** to the build that started it, so a run's history is only ever replayed by the code
that wrote it: a new build needs no ``workflow.patched`` branches. A run moves to the deployment's current
(or ramping) version by continuing-as-new, which this workflow does anyway; it does so at its next wake-up
(a trigger, an update, its resync timer) once Temporal reports that the target version changed, before the
pass, so the pass runs on the new build. The choice, compared with auto-upgrade, is argued in
docs/operations.md (*Versioned rollouts*). On an unversioned worker all of this is inert.
"""

from __future__ import annotations

from typing import NoReturn

from temporalio import workflow
from temporalio.common import VersioningBehavior

from workflows.models import ServiceWorkflowInput

#: Declared by versioned workers (``worker.versioning``) as their default rather than in ``workflow.defn``:
#: the SDK would send a ``defn`` behaviour from unversioned workers too, and the server refuses that.
BEHAVIOR = VersioningBehavior.PINNED
#: The new run starts on the target version instead of inheriting the pin of the run it continues.
MOVE = workflow.ContinueAsNewVersioningBehavior.AUTO_UPGRADE


def target_changed() -> bool:
    """True when this run is pinned to a version that is no longer the one new work goes to."""
    return workflow.info().is_target_worker_deployment_version_changed()


def build_id() -> str | None:
    """The build ID of the versioned worker running this task; None on an unversioned worker."""
    version = workflow.info().get_current_deployment_version()
    return version.build_id if version is not None and version.deployment_name else None


async def continue_on_target(next_run: ServiceWorkflowInput) -> NoReturn:
    """Continue as new on the target version, once signal and update handlers have finished; the state in
    ``next_run`` carries the pending triggers, so the pass they asked for runs on the new build."""
    await workflow.wait_condition(workflow.all_handlers_finished)
    workflow.continue_as_new(next_run, initial_versioning_behavior=MOVE)
