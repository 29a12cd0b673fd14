"""KServe #5918 on the real control plane: the merged spec is dry-run created, and kube-apiserver's own
checks of the LLMInferenceService CRD (its OpenAPI patterns and CEL rules) decide ``PresetsCombined``.
Ported from ``config_validation_int_test.go`` ("should reject a rendered config that violates the service
CRD schema", f2849c052): a header-name template the config's loose schema takes renders into a name the
service's schema refuses. The watcher drives the workflows; the test only edits the cluster."""

from __future__ import annotations

import asyncio
import glob
from typing import Any

import pytest
import yaml

from benchmarks import peer_mix
from llmisvc_core import naming
from llmisvc_core.merge import rendered_validation
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC, LLMISVC_CONFIG
from llmisvc_core.planner.passes import plan_pass
from llmisvc_core.world.config import Environment
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_router.state_file import parse_state
from tests.cluster import Cluster
from tests.integration import world
from tests.integration.harness import WORKER_AGENT, Stack, conditions_of, running_stack, until
from tests.integration.world import Wire
from workflows.models import workflow_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

CONFIG = "team-route"
NAME = "opt"


def team_route(namespace: str, header: str) -> Wire:
    """A config whose one route rule matches on a header named ``header`` (a template)."""
    match = {"headers": [{"name": header, "value": "test-model"}]}
    rules = [{"matches": [match], "backendRefs": [{"name": "elsewhere", "port": 8000}]}]
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": CONFIG, "namespace": namespace},
        "spec": {"router": {"route": {"http": {"spec": {"rules": rules}}}}},
    }


async def create_with_base_ref(stack: Stack, name: str) -> None:
    body = world.service(name, stack.namespace, router={"route": {}, "gateway": {}})
    body["spec"]["baseRefs"] = [{"name": CONFIG}]
    stack.workflow_ids.add(workflow_id(stack.namespace, name))
    await stack.create(LLMISVC, body)


async def presets_combined(stack: Stack, name: str, status: str) -> Wire:
    async def probe() -> Wire | None:
        found = conditions_of(await stack.service(name)).get("PresetsCombined")
        return found if found is not None and found["status"] == status else None

    return await until(probe, f"PresetsCombined={status} on {name}")


def dry_runs(stack: Stack) -> int:
    """The worker's creates of LLMInferenceServices: it creates none but with dryRun=All."""
    return len(
        stack.cluster.counter.records(user_agent=WORKER_AGENT, verb="create", resource="llminferenceservices")
    )


async def test_5918_invalid_rendered_config_a_header_the_crd_refuses_stops_the_service_until_fixed(
    temporal, cluster
):
    async with running_stack(temporal, cluster, watcher=True) as stack:
        created = await stack.create(
            LLMISVC_CONFIG, team_route(stack.namespace, "{{ .ObjectMeta.Name }} invalid")
        )
        assert created["spec"]["router"]["route"]["http"]["spec"]["rules"], "the config's schema takes it"
        await create_with_base_ref(stack, NAME)

        presets = await presets_combined(stack, NAME, "False")
        svc = await stack.service(NAME)

        assert presets["reason"] == "InvalidRenderedConfig"
        prefix = (
            "dry-run validation failed after merging configs ["
            f"Preset:{stack.kserve_namespace}/kserve-config-llm-router-route, "
            f"Preset:{stack.kserve_namespace}/kserve-config-llm-template, "
            f"UserRef:{stack.namespace}/{CONFIG}]: "
            "spec.router.route.http.spec.rules[0].matches[0].headers[0].name: Invalid value: "
            f'"{NAME} invalid": '
        )
        assert presets["message"].startswith(prefix), presets["message"]
        assert "-validation-" not in presets["message"]
        ready = conditions_of(svc)["Ready"]
        assert (ready["status"], ready["reason"]) == ("False", "InvalidRenderedConfig")
        assert ready["message"] == presets["message"]
        user_ref = {"name": CONFIG, "namespace": stack.namespace, "source": "UserRef"}
        assert user_ref in svc["status"]["appliedConfigs"]
        # Nothing was routed, and the dry run stored nothing: the service is alone in its namespace.
        assert await stack.get(HTTPROUTE, naming.route_name(NAME)) is None
        listed = await asyncio.to_thread(stack.kube.list_objects, LLMISVC, stack.namespace, {})
        assert [o["metadata"]["name"] for o in listed] == [NAME]

        fixed = {"spec": team_route(stack.namespace, "x-team")["spec"]}
        await stack.patch(LLMISVC_CONFIG, CONFIG, fixed)

        presets = await presets_combined(stack, NAME, "True")

        async def routed() -> Wire | None:
            return await stack.get(HTTPROUTE, naming.route_name(NAME))

        route = await until(routed, "the route of the fixed config")
        assert route["spec"]["rules"][0]["matches"][0]["headers"][0]["name"] == "x-team"
        ready = conditions_of(await stack.service(NAME))["Ready"]
        assert ready.get("reason") != "InvalidRenderedConfig"


async def test_5918_invalid_rendered_config_a_cel_rule_of_the_crd_refuses_a_merged_spec(temporal, cluster):
    """The CRD's CEL rule ``!(has(self.replicas) && has(self.scaling))``: a config's ``scaling`` merged
    into a service that sets ``replicas`` (each alone is valid)."""
    async with running_stack(temporal, cluster, watcher=True) as stack:
        config = team_route(stack.namespace, "x-team")
        keda = {"triggers": [{"type": "cpu", "metadata": {"value": "50"}}]}
        config["spec"]["scaling"] = {"minReplicas": 1, "maxReplicas": 2, "keda": keda}
        await stack.create(LLMISVC_CONFIG, config)
        body = world.service(NAME, stack.namespace, router={"route": {}, "gateway": {}})
        body["spec"] |= {"baseRefs": [{"name": CONFIG}], "replicas": 1}
        stack.workflow_ids.add(workflow_id(stack.namespace, NAME))
        await stack.create(LLMISVC, body)

        presets = await presets_combined(stack, NAME, "False")

        assert presets["reason"] == "InvalidRenderedConfig"
        assert presets["message"].endswith(
            "]: spec: Invalid value: replicas and scaling are mutually exclusive; use scaling for "
            "autoscaled deployments or replicas for static deployments"
        ), presets["message"]


async def test_5918_invalid_rendered_config_a_valid_service_is_checked_once_and_idle_passes_ask_nothing(
    temporal, cluster
):
    """One dry run for the first pass; passes over the same merged spec reuse the verdict; a config edit
    that changes the merged spec is checked once more."""
    async with running_stack(temporal, cluster, watcher=True) as stack:
        await stack.create(LLMISVC_CONFIG, team_route(stack.namespace, "x-team"))
        await create_with_base_ref(stack, NAME)
        await presets_combined(stack, NAME, "True")
        handle = stack.handle(NAME)
        assert dry_runs(stack) == 1
        state = await stack.state(handle)
        assert state.rendered is not None and state.rendered.outcome is rendered_validation.Outcome.ACCEPTED

        for reason in ("resync", "resync again"):
            await stack.reconcile_now(handle, reason)
        assert dry_runs(stack) == 1

        await stack.patch(LLMISVC_CONFIG, CONFIG, {"spec": team_route(stack.namespace, "x-other")["spec"]})

        async def checked_again() -> bool | None:
            return True if dry_runs(stack) == 2 else None

        await until(checked_again, "a dry run of the edited merged spec")
        await until(lambda: _route_with_header(stack, "x-other"), "the route of the edited config")


async def _route_with_header(stack: Stack, header: str) -> Wire | None:
    route = await stack.get(HTTPROUTE, naming.route_name(NAME))
    rules = (route or {}).get("spec", {}).get("rules") or [{}]
    names = [h.get("name") for m in rules[0].get("matches") or [] for h in m.get("headers") or []]
    return route if header in names else None


EXAMPLES = sorted(glob.glob("examples/*.yaml") + glob.glob("config/samples/*.yaml"))


async def test_5918_the_merged_specs_of_the_examples_and_fixtures_pass_the_real_crd(cluster: Cluster) -> None:
    """Every service of ``examples/``, ``config/samples/``, the integration tests' own and the shapes of the
    side-by-side benchmark (``benchmarks.peer_mix``), merged as a pass merges it, is accepted by
    kube-apiserver's dry run: a refused one would change the outcome of every test, demo and benchmark built
    on it."""
    refused, checked = await asyncio.to_thread(dry_run_every_example, cluster)
    assert refused == []
    assert checked > len(EXAMPLES)


def dry_run_every_example(cluster: Cluster) -> tuple[list[str], int]:
    assert EXAMPLES, "run from the repository's root"
    services: list[tuple[str, Any, Any]] = []
    for path in EXAMPLES:
        with open(path, encoding="utf-8") as handle:
            state = parse_state(handle.read(), path)
        services += [(path, svc, state.snapshot) for svc in state.services]
    fixtures = {
        "tests/integration/world.py": [
            world.service(NAME, "ns", router={"route": {}, "gateway": {}, "scheduler": {}})
        ],
        "benchmarks/peer_mix.py": [
            peer_mix.service(f"mix-{shape}", "ns", shape) for shape in peer_mix.SHAPES
        ],
    }
    for path, bodies in fixtures.items():
        state = parse_state(yaml.safe_dump_all(bodies), path)
        services += [(path, svc, state.snapshot) for svc in state.services]
    client = cluster.api_client("integration-test")
    try:
        kube = KubeClusterApi(client)
        refused = []
        for path, svc, snapshot in services:
            plan = plan_pass(svc, snapshot, Environment(), "2026-01-01T00:00:00Z", verdicts={})
            if plan.dry_run is None:
                continue  # the merge itself fails (a config found nowhere): nothing to send
            meta = {**plan.dry_run["metadata"], "namespace": cluster.namespace}
            try:
                kube.create_dry_run(LLMISVC, {**plan.dry_run, "metadata": meta})
            except ApiError as err:
                refused.append(f"{path}: {svc.namespace}/{svc.name}: {err.message}")
    finally:
        client.close()  # type: ignore[no-untyped-call]
    return refused, len(services)
