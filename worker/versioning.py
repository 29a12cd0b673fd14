"""Worker Versioning settings: which Temporal Worker Deployment version this worker registers as.

Off unless a deployment name is set. ``LLMISVC_ROUTER_DEPLOYMENT_NAME`` names the deployment (else
``TEMPORAL_DEPLOYMENT_NAME``, which temporal-worker-controller sets in the pods it creates);
``LLMISVC_ROUTER_BUILD_ID`` is the build ID (else the controller's ``TEMPORAL_WORKER_BUILD_ID``, else the
package version followed by ``LLMISVC_ROUTER_IMAGE_TAG`` when that is given and differs from it).

A versioned worker only receives tasks once its version is the deployment's current (or ramping) one:
``temporal worker deployment set-current-version``, or the controller's rollout. How the workflow moves
between versions is in :mod:`workflows.versioning`; why, in docs/operations.md (*Versioned rollouts*).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator
from temporalio.common import WorkerDeploymentVersion
from temporalio.worker import WorkerDeploymentConfig

from llmisvc_runtime.version import package_version
from workflows import versioning as workflow_versioning

#: Temporal's ``limit.workerBuildIdSize``; the deployment name shares the bound.
MAX_LENGTH = 255
#: The build-ID alphabet of temporal-worker-controller's ``unsafeCustomBuildID`` (a subset of Temporal's),
#: so that an ID chosen here can also be handed to the controller.
_BUILD_ID = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$")
_UNVERSIONED = "__unversioned__"  # Temporal's reserved name for "no version"


def default_build_id(version: str, image_tag: str | None) -> str:
    """``<version>`` or ``<version>-<image tag>``; characters outside the build-ID alphabet become ``-``."""
    if not image_tag or image_tag == version:
        return version
    return f"{version}-{re.sub(r'[^a-zA-Z0-9._-]', '-', image_tag)}".strip("-._")


def from_env(values: Mapping[str, str]) -> dict[str, str | None]:
    """The raw deployment name and build ID the environment asks for (validated by the settings)."""
    tag = values.get("LLMISVC_ROUTER_IMAGE_TAG") or None
    return {
        "deployment_name": values.get("LLMISVC_ROUTER_DEPLOYMENT_NAME")
        or values.get("TEMPORAL_DEPLOYMENT_NAME")
        or None,
        "build_id": values.get("LLMISVC_ROUTER_BUILD_ID")
        or values.get("TEMPORAL_WORKER_BUILD_ID")
        or default_build_id(package_version(), tag),
    }


def check_deployment_name(name: str | None) -> str | None:
    if name is None:
        return None
    if not name.strip() or len(name) > MAX_LENGTH:
        raise ValueError(f"{name!r} must be 1 to {MAX_LENGTH} characters")
    if "." in name:
        # Temporal writes a version as "<deployment>.<build ID>" and splits it at the first dot.
        raise ValueError(f"{name!r} must not contain '.' (Temporal separates it from the build ID with one)")
    return name


def check_build_id(build_id: str) -> str:
    if build_id == _UNVERSIONED:
        raise ValueError(f"{build_id!r} is Temporal's name for unversioned workers")
    if len(build_id) > MAX_LENGTH or not _BUILD_ID.match(build_id):
        raise ValueError(
            f"{build_id!r} must be 1 to {MAX_LENGTH} letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit"
        )
    return build_id


DeploymentName = Annotated[str | None, AfterValidator(check_deployment_name)]
BuildId = Annotated[str, AfterValidator(check_build_id)]


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
