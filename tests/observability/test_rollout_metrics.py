"""A rollout's metrics (issue 22) on the process's one Prometheus endpoint: ``llmisvc_router_rollout_step``
by group and ``llmisvc_router_rollout_gate_checks_total`` by gate and state, from a rollout run by the
production worker against the real control plane (its two services' conditions written as their
controllers would: no watcher runs here, so no pass rewrites them)."""

from __future__ import annotations

import asyncio

from activities.rollout_models import RolloutMembers
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.rollout.plan import parse_plan
from tests import builders as b
from tests.cluster import Cluster
from tests.observability.harness import running_orchestrator, until
from tests.observability.test_metrics import Scrape, _scrape, metered_client
from workflows.rollout_models import RolloutInput, RolloutPhase, rollout_workflow_id
from workflows.rollout_workflow import RolloutWorkflow

READY = [
    {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    for t in ("RouterReady", "WorkloadsReady", "GroupReady")
]


async def test_a_rollout_exports_its_step_and_its_gate_checks(
    temporal_address: str, cluster: Cluster
) -> None:
    client, port = await metered_client(temporal_address)
    async with running_orchestrator(client, cluster) as orchestrator:
        ns, kube = orchestrator.namespace, orchestrator.kube
        for name, weight in (("v1", 100), ("v2", 0)):
            router = {"route": {"group": "opt", "weight": weight}, "gateway": {}}
            created = await asyncio.to_thread(
                kube.create,
                LLMISVC,
                b.service(name, ns, uid=None, generation=None, model=b.model(), router=router),
            )
            await asyncio.to_thread(
                kube.replace_status, LLMISVC, {**created, "status": {"conditions": READY}}
            )
        members = RolloutMembers(namespace=ns, group="opt", stable="v1", candidate="v2")
        plan = parse_plan(
            {"steps": [{"weight": 50, "dwell_seconds": 0}, {"weight": 100, "dwell_seconds": 0}]}
        )
        handle = await client.start_workflow(
            RolloutWorkflow.run,
            RolloutInput(members=members, plan=plan),
            id=rollout_workflow_id(ns, "opt"),
            task_queue=orchestrator.settings.task_queue,
        )
        result = await asyncio.wait_for(handle.result(), 60)
        assert result.phase == RolloutPhase.SUCCEEDED
        labels = {"llmisvc_namespace": ns, "group": "opt"}

        async def probe() -> Scrape | None:
            scrape = await asyncio.to_thread(_scrape, port)
            return scrape if scrape.value("llmisvc_router_rollout_step", **labels) == 2 else None

        metrics = await until(probe, "llmisvc_router_rollout_step 2")
    checks = "llmisvc_router_rollout_gate_checks_total"
    # Three reads of the gates (before each step and after the last), six readiness gates each.
    assert metrics.value(checks, **labels, state="passed") == 18
    assert metrics.value(checks, **labels, service="v2", gate="WorkloadsReady", state="passed") == 3
    assert metrics.value(checks, **labels, state="failed") is None
