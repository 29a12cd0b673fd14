"""Worker Versioning settings: off unless a deployment name is given; the build ID defaults to the package
version and the image tag; the variables temporal-worker-controller sets are honoured; flags override;
unusable values are one line naming the variable or flag."""

from __future__ import annotations

import pytest
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion

from llmisvc_router import options
from llmisvc_router.cli import build_parser
from llmisvc_runtime.settings import OrchestratorSettings, SettingsError
from llmisvc_runtime.version import package_version
from worker import versioning

VERSION = package_version()


def test_versioning_is_off_without_a_deployment_name() -> None:
    settings = OrchestratorSettings.from_env({})
    assert settings.deployment_name is None
    assert versioning.deployment_config(settings.deployment_name, settings.build_id) is None
    assert settings.build_id == VERSION


def test_a_deployment_name_makes_the_worker_a_pinned_version_of_that_deployment() -> None:
    settings = OrchestratorSettings.from_env(
        {"LLMISVC_ROUTER_DEPLOYMENT_NAME": "llmisvc-router", "LLMISVC_ROUTER_BUILD_ID": "2026-12-01.1"}
    )
    config = versioning.deployment_config(settings.deployment_name, settings.build_id)
    assert config is not None and config.use_worker_versioning
    assert config.version == WorkerDeploymentVersion("llmisvc-router", "2026-12-01.1")
    assert config.default_versioning_behavior == VersioningBehavior.PINNED


@pytest.mark.parametrize(
    ("tag", "build_id"),
    [
        pytest.param(None, VERSION, id="no-tag-the-version"),
        pytest.param(VERSION, VERSION, id="tag-equal-to-the-version"),
        pytest.param("sha-1a2b3c4", f"{VERSION}-sha-1a2b3c4", id="version-and-tag"),
        pytest.param("v2@sha256:ab", f"{VERSION}-v2-sha256-ab", id="foreign-characters-become-dashes"),
    ],
)
def test_the_build_id_defaults_to_the_package_version_and_the_image_tag(
    tag: str | None, build_id: str
) -> None:
    env = {"LLMISVC_ROUTER_DEPLOYMENT_NAME": "llmisvc-router"}
    if tag is not None:
        env["LLMISVC_ROUTER_IMAGE_TAG"] = tag
    assert OrchestratorSettings.from_env(env).build_id == build_id


def test_the_variables_of_temporal_worker_controller_are_honoured_and_ours_win() -> None:
    controller = {"TEMPORAL_DEPLOYMENT_NAME": "llmisvc-router/worker", "TEMPORAL_WORKER_BUILD_ID": "img-5f7c"}
    settings = OrchestratorSettings.from_env(controller)
    assert (settings.deployment_name, settings.build_id) == ("llmisvc-router/worker", "img-5f7c")
    ours = {**controller, "LLMISVC_ROUTER_DEPLOYMENT_NAME": "mine", "LLMISVC_ROUTER_BUILD_ID": "b1"}
    settings = OrchestratorSettings.from_env(ours)
    assert (settings.deployment_name, settings.build_id) == ("mine", "b1")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        pytest.param(
            {"LLMISVC_ROUTER_DEPLOYMENT_NAME": "llmisvc.router"},
            "LLMISVC_ROUTER_DEPLOYMENT_NAME (or TEMPORAL_DEPLOYMENT_NAME): 'llmisvc.router' must not contain",
            id="dot-in-the-deployment-name",
        ),
        pytest.param(
            {"LLMISVC_ROUTER_BUILD_ID": "-b1"},
            "LLMISVC_ROUTER_BUILD_ID (or TEMPORAL_WORKER_BUILD_ID): '-b1' must be 1 to 255 letters",
            id="build-id-starting-with-a-dash",
        ),
        pytest.param(
            {"LLMISVC_ROUTER_BUILD_ID": "__unversioned__"},
            "LLMISVC_ROUTER_BUILD_ID (or TEMPORAL_WORKER_BUILD_ID): '__unversioned__' is Temporal's name",
            id="reserved-build-id",
        ),
    ],
)
def test_unusable_versioning_settings_are_one_line_naming_the_variable(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as err:
        OrchestratorSettings.from_env(env)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("command", ["worker", "run"])
def test_versioning_flags_override_the_environment(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMISVC_ROUTER_DEPLOYMENT_NAME", "from-env")
    args = build_parser().parse_args([command, "--deployment-name", "from-flag", "--build-id", "b2"])
    settings = options.settings(args)
    assert (settings.deployment_name, settings.build_id) == ("from-flag", "b2")


def test_a_bad_build_id_flag_names_the_flag() -> None:
    args = build_parser().parse_args(["worker", "--build-id", "a b"])
    with pytest.raises(SettingsError, match=r"^--build-id: 'a b' must be"):
        options.settings(args)
