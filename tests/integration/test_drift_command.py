"""``llmisvc-router drift [NS/NAME] [-o yaml|json]`` as a person runs it, in a subprocess against the dev
server, with the test's stack in shadow mode: one service's report, every differing service's, and the
one-line errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml

from activities.management import Management
from tests.integration.harness import running_stack, until
from tests.integration.test_cli_commands import cli
from tests.integration.test_shadow_mode import write_as_kserve

pytestmark = pytest.mark.asyncio(loop_scope="session")

SHADOW = Management.of("shadow")


async def test_drift_of_every_service_lists_those_that_differ_with_their_objects(temporal, cluster):
    async with running_stack(temporal, cluster, management=SHADOW) as stack:
        for name in ("matches", "differs"):
            await stack.create_service(name)
        await asyncio.to_thread(write_as_kserve, stack, "matches")
        for name in ("matches", "differs"):
            await stack.passes(await stack.start_workflow(name), 1)

        async def listed() -> dict[str, Any] | None:
            code, out, err = await cli(temporal, stack, "drift", "-o", "json")
            assert code == 0, err
            document: dict[str, Any] = json.loads(out)
            return document if document["services"] == 2 else None  # visibility catches up

        document = await until(listed, "both workflows listed", timeout=30, interval=0.5)
        assert document["differing"] == 1
        [report] = document["drift"]
        assert report["service"] == f"{stack.namespace}/differs" and report["mode"] == "shadow"
        ns = stack.namespace
        created = {
            f"create HTTPRoute {ns}/differs-kserve-route",
            f"create InferencePool.inference.networking.k8s.io/v1 {ns}/differs-inference-pool",
            f"create InferencePool.inference.networking.x-k8s.io/v1alpha2 {ns}/differs-inference-pool",
            f"create Service {ns}/differs-epp-service",
        }
        assert set(report["objects"]) == created and all(v == [] for v in report["objects"].values())
        assert report["drift"] == len(created) + 1  # and the status, as one
        assert any(
            line.startswith("condition HTTPRoutesReady: (absent) -> False") for line in report["status"]
        )

        code, out, err = await cli(temporal, stack, "drift", f"{stack.namespace}/matches")
        assert code == 0, err
        one = yaml.safe_load(out)
        assert (one["service"], one["mode"], one["drift"], one["objects"], one["status"]) == (
            f"{stack.namespace}/matches",
            "shadow",
            0,
            {},
            [],
        )


async def test_drift_errors_are_one_line_with_the_exit_status(temporal, cluster):
    async with running_stack(temporal, cluster, management=SHADOW) as stack:
        await stack.create_service("idle")
        service = f"{stack.namespace}/idle"
        cases = [
            (["drift", f"{stack.namespace}/nope"], 3, f"no LLMInferenceService {stack.namespace}/nope"),
            (
                ["drift", service],
                3,
                f"no workflow for {service} (is the watcher running, and does its selector include it?)",
            ),
            (["drift", service, "-o", "xml"], 2, "-o xml: expected yaml or json"),
            (["drift", "no-slash"], 2, "no-slash: expected NAMESPACE/NAME"),
        ]
        for args, status, message in cases:
            code, out, err = await cli(temporal, stack, *args)
            assert (code, out, err.strip()) == (status, "", f"llmisvc-router drift: {message}"), args
