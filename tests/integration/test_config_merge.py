"""LLMInferenceServiceConfigs on the dev stack (issue 9): the watcher starts and signals the workflows, the
worker merges the configs it reads from the cluster; the test only edits the cluster."""

from __future__ import annotations

import asyncio
import copy

import pytest

from llmisvc_core import naming
from llmisvc_core.merge import wellknown
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC, LLMISVC_CONFIG
from tests.integration import world
from tests.integration.harness import BOTH_RBAC_SHAPES, Stack, conditions_of, running_stack, until
from tests.integration.world import Wire
from workflows.models import workflow_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROUTE_CONFIG = "kserve-config-llm-router-route"


def route_config(namespace: str, hostname: str) -> Wire:
    """KServe's shipped route preset installed in ``namespace``, with a hostname a team added."""
    (shipped,) = [
        c for c in wellknown.shipped_configs("kserve-", namespace) if c["metadata"]["name"] == ROUTE_CONFIG
    ]
    config = copy.deepcopy(shipped)
    config["spec"]["router"]["route"]["http"]["spec"]["hostnames"] = [hostname]
    return config


async def route_hostnames(stack: Stack, name: str) -> list[str] | None:
    route = await stack.get(HTTPROUTE, naming.route_name(name))
    hostnames = (route or {}).get("spec", {}).get("hostnames")
    return [str(h) for h in hostnames] if isinstance(hostnames, list) else None


async def until_hostnames(stack: Stack, name: str, wanted: list[str], what: str) -> None:
    async def probe() -> bool | None:
        return True if await route_hostnames(stack, name) == wanted else None

    await until(probe, what)


async def until_applied(stack: Stack, name: str, entry: Wire) -> None:
    """The status is written after the route: wait for it to list ``entry`` in ``appliedConfigs``."""

    async def probe() -> bool | None:
        applied = (await stack.service(name)).get("status", {}).get("appliedConfigs") or []
        return True if entry in applied else None

    await until(probe, f"status.appliedConfigs of {name} to list {entry}")


@BOTH_RBAC_SHAPES
async def test_a_config_edited_in_the_system_namespace_reaches_the_routes_of_its_services(temporal, cluster):
    async with running_stack(temporal, cluster, watcher=True) as stack:
        await stack.create(LLMISVC_CONFIG, route_config(stack.kserve_namespace, "v1.example.com"))
        await stack.create_service("a")
        await stack.create_service("b")
        for name in ("a", "b"):
            await until_hostnames(stack, name, ["v1.example.com"], f"{name}'s route from the system config")

        patch = {"spec": {"router": {"route": {"http": {"spec": {"hostnames": ["v2.example.com"]}}}}}}
        await asyncio.to_thread(
            stack.kube.patch_merge, LLMISVC_CONFIG, stack.kserve_namespace, ROUTE_CONFIG, patch
        )

        for name in ("a", "b"):
            await until_hostnames(stack, name, ["v2.example.com"], f"{name}'s route after the config edit")
        await until_applied(
            stack, "a", {"name": ROUTE_CONFIG, "namespace": stack.kserve_namespace, "source": "Preset"}
        )


async def test_a_namespace_local_config_overrides_the_system_namespace_one(temporal, cluster):
    async with running_stack(temporal, cluster, watcher=True) as stack:
        await stack.create(LLMISVC_CONFIG, route_config(stack.kserve_namespace, "system.example.com"))
        await stack.create_service("a")
        await until_hostnames(stack, "a", ["system.example.com"], "the route from the system config")

        await stack.create(LLMISVC_CONFIG, route_config(stack.namespace, "local.example.com"))

        await until_hostnames(stack, "a", ["local.example.com"], "the route from the namespace-local config")
        local = {"name": ROUTE_CONFIG, "namespace": stack.namespace, "source": "Preset"}
        await until_applied(stack, "a", local)


async def test_a_missing_base_ref_writes_nothing_but_status_and_fixing_it_recovers(temporal, cluster):
    async with running_stack(temporal, cluster, watcher=True) as stack:
        body = world.service("a", stack.namespace)
        body["spec"]["baseRefs"] = [{"name": "team-defaults"}]
        stack.workflow_ids.add(workflow_id(stack.namespace, "a"))
        await stack.create(LLMISVC, body)

        async def not_combined() -> Wire | None:
            presets = conditions_of(await stack.service("a")).get("PresetsCombined")
            return presets if presets is not None and presets["status"] == "False" else None

        presets = await until(not_combined, "PresetsCombined=False")
        assert presets["reason"] == "ConfigNotFound"
        assert presets["message"] == (
            f'LLMInferenceServiceConfig "team-defaults" not found in namespaces '
            f"[{stack.namespace} {stack.kserve_namespace}]"
        )
        # Status only (and the Event that tells of it): no routing object is written.
        assert stack.worker_writes() == stack.worker_writes("llminferenceservices") + stack.worker_writes(
            "events"
        )
        assert await stack.get(HTTPROUTE, naming.route_name("a")) is None

        team = {
            "apiVersion": "serving.kserve.io/v1alpha2",
            "kind": "LLMInferenceServiceConfig",
            "metadata": {"name": "team-defaults", "namespace": stack.namespace},
            "spec": {"router": {"route": {"http": {"spec": {"hostnames": ["team.example.com"]}}}}},
        }
        await stack.create(LLMISVC_CONFIG, team)

        await until_hostnames(stack, "a", ["team.example.com"], "the route once the baseRef exists")

        async def combined() -> bool | None:
            presets = conditions_of(await stack.service("a")).get("PresetsCombined")
            return True if presets is not None and presets["status"] == "True" else None

        await until(combined, "PresetsCombined=True once the baseRef exists")
