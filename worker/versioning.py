"""Worker Versioning: which Temporal Worker Deployment version this worker registers as, from the settings
(``llmisvc_runtime.settings``: the deployment name and build ID, their variables and their rules).

A versioned worker only receives tasks once its version is the deployment's current (or ramping) one:
``temporal worker deployment set-current-version``, or the controller's rollout. How the workflow moves
between versions is in :mod:`workflows.versioning`; why, in docs/operations.md (*Versioned rollouts*).
"""

from __future__ import annotations

from temporalio.common import WorkerDeploymentVersion
from temporalio.worker import WorkerDeploymentConfig

from workflows import versioning as workflow_versioning


def deployment_config(deployment_name: str | None, build_id: str) -> WorkerDeploymentConfig | None:
    """The SDK's versioning options; None (an unversioned worker) without a deployment name. The
    behaviour is the workflow's (``workflows.versioning.BEHAVIOR``), its only workflow type."""
    if deployment_name is None:
        return None
    return WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(deployment_name=deployment_name, build_id=build_id),
        use_worker_versioning=True,
        default_versioning_behavior=workflow_versioning.BEHAVIOR,
    )
