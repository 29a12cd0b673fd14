"""Progressive rollouts end to end (issue 22) on the real control plane: two services in a routing group
(as ``test_routing_group.py`` builds them), the production worker, and the command line as a person runs
it. A rollout 10% → 50% → 100% completes and the stable service's route follows the weights; one whose
Prometheus gate (a tiny HTTP server answering ``/api/v1/query``) fails half-way rolls back to the last
good weights. Each prints its timeline (step, weights, time) for the notes."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
import yaml
from temporalio.client import Client

from activities.events import EVENT as EVENTS
from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from llmisvc_kube.api import ApiError
from tests import prometheus
from tests.integration.harness import WORKER_AGENT, Stack, conditions_of, running_stack, until
from tests.integration.test_cli_commands import cli
from tests.integration.test_routing_group import grouped, shared_backends
from tests.integration.test_worker_process import logged, product_env, product_process
from workflows.rollout_models import RolloutPhase, RolloutResult, RolloutStatus, rollout_workflow_id
from workflows.rollout_workflow import RolloutWorkflow

#: Each test drives a rollout through real passes for 60-110 s on a loaded 2-CPU machine, and the first of
#: a session also waits for the control plane (55 s measured): past the suite's 120 s default.
pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(300)]
GROUP = "llama"  # test_routing_group.grouped's
GATES = ("RouterReady", "WorkloadsReady", "GroupReady")


async def make_workloads_ready(stack: Stack, name: str) -> None:
    """What KServe's workload reconciler reports: a ready primary workload and ``WorkloadsReady``."""

    def write() -> None:
        for _ in range(10):  # the router writes the status too: a lost race reads again
            svc = stack.kube.get(LLMISVC, stack.namespace, name)
            assert svc is not None
            status = svc.setdefault("status", {})
            status["workloads"] = {
                "primary": {"apiGroup": "apps", "kind": "Deployment", "name": name, "readyReplicas": 1}
            }
            others = [c for c in status.get("conditions") or [] if c["type"] != "WorkloadsReady"]
            ready = {"type": "WorkloadsReady", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            status["conditions"] = [*others, ready]
            try:
                stack.kube.replace_status(LLMISVC, svc)
                return
            except ApiError as err:
                if err.status != 409:
                    raise
        raise AssertionError(f"could not write the status of {name}")

    await asyncio.to_thread(write)


async def grouped_pair(stack: Stack) -> None:
    """``v1`` with all the traffic and ``v2`` with none, both routable, Ready and GroupReady; the
    watcher starts their workflows and signals them when the weights move, as in a cluster."""
    await stack.create_service("v1", router=grouped(100))
    await stack.create_service("v2", router=grouped(0))
    for name in ("v1", "v2"):
        await stack.until_router_ready(name, timeout=60)
        await make_workloads_ready(stack, name)

    async def gates_pass() -> bool:
        for name in ("v1", "v2"):
            await stack.reconcile_now(stack.handle(name), "waiting for the gates")
        conds = [conditions_of(await stack.service(n)) for n in ("v1", "v2")]
        return all(c.get(t, {}).get("status") == "True" for c in conds for t in GATES)

    await until(
        gates_pass, "both members RouterReady, WorkloadsReady and GroupReady", timeout=60, interval=0.5
    )


def write_plan(stack: Stack, tmp_path: Path, **extra: object) -> Path:
    plan = {
        "steps": [{"weight": w, "dwell_seconds": 2} for w in (10, 50, 100)],
        "gate_recheck_seconds": 1,
        "gate_timeout_seconds": 30,
        **extra,
    }
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan))
    return path


async def weights(stack: Stack) -> tuple[int, int]:
    v1, v2 = await stack.service("v1"), await stack.service("v2")
    return v1["spec"]["router"]["route"]["weight"], v2["spec"]["router"]["route"]["weight"]


def print_timeline(title: str, status: RolloutStatus) -> None:
    start = status.timeline[0].at
    print(f"\n{title}: {status.phase.value}: {status.reason}")
    print(f"{'t (s)':>6}  {'step':>4}  {'v1':>3}  {'v2':>3}  note")
    for entry in status.timeline:
        seconds = (entry.at - start).total_seconds()
        stable, candidate = entry.weights.stable, entry.weights.candidate
        print(f"{seconds:6.1f}  {entry.step:4d}  {stable:3d}  {candidate:3d}  {entry.note}")


async def start(temporal: Client, stack: Stack, plan: Path) -> dict[str, object]:
    group = f"{stack.namespace}/{GROUP}"
    code, out, err = await cli(
        temporal, stack, "rollout", "start", group, "--stable", "v1", "--candidate", "v2", "-f", str(plan)
    )
    assert code == 0, err
    stack.workflow_ids.add(rollout_workflow_id(stack.namespace, GROUP))
    document: dict[str, object] = yaml.safe_load(out)
    return document


async def test_rollout_10_50_100_completes_on_the_real_control_plane(temporal, cluster, tmp_path):
    async with running_stack(temporal, cluster, controller={}, watcher=True) as stack:
        await grouped_pair(stack)
        started = await start(temporal, stack, write_plan(stack, tmp_path))
        assert started["id"] == rollout_workflow_id(stack.namespace, GROUP)
        again = await cli(
            temporal,
            stack,
            "rollout",
            "start",
            f"{stack.namespace}/{GROUP}",
            "--stable",
            "v1",
            "--candidate",
            "v2",
            "--steps",
            "100",
        )
        assert again[0] == 1 and f"is running already: {started['id']}" in again[2], again

        handle = temporal.get_workflow_handle_for(RolloutWorkflow.run, str(started["id"]))
        described = await handle.describe()
        summary = f"rollout {stack.namespace}/llama: v1 → v2, 10% → 50% → 100%"
        assert await described.static_summary() == summary
        assert f"llmisvc-router rollout status {stack.namespace}/llama" in (
            await described.static_details() or ""
        )
        group = f"{stack.namespace}/{GROUP}"
        code, out, err = await cli(temporal, stack, "rollout", "pause", group)
        assert code == 0, err
        assert yaml.safe_load(out)["phase"] == "paused"
        code, out, err = await cli(temporal, stack, "rollout", "pause", group)
        assert (code, out) == (1, "") and "is paused already" in err, err
        code, out, err = await cli(temporal, stack, "rollout", "resume", group)
        assert code == 0, err
        result: RolloutResult = await asyncio.wait_for(handle.result(), 90)
        assert result.phase == RolloutPhase.SUCCEEDED, result
        assert await weights(stack) == (0, 100)
        code, out, err = await cli(temporal, stack, "rollout", "abort", group)
        assert code == 3 and f"no running rollout of group {group}" in err, (code, err)

        code, out, err = await cli(temporal, stack, "rollout", "status", f"{stack.namespace}/{GROUP}")
        assert code == 0, err
        status = RolloutStatus.model_validate({k: v for k, v in yaml.safe_load(out).items() if k != "id"})
        assert [(e.step, e.weights.stable, e.weights.candidate) for e in status.timeline] == [
            (0, 100, 0),
            (1, 90, 10),
            (2, 50, 50),
            (3, 0, 100),
        ]
        print_timeline("rollout 10 → 50 → 100", status)

        # The stable service's route follows: v2 takes the shared rules' traffic.
        svc_v1, svc_v2 = naming.workload_service_name("v1"), naming.workload_service_name("v2")

        async def routed() -> bool:
            await stack.reconcile_now(stack.handle("v1"), "weights moved")
            route = await stack.get(HTTPROUTE, naming.route_name("v1"))
            return route is not None and shared_backends(route) == {((svc_v1, 0), (svc_v2, 100))}

        await until(routed, "v1's route to send the shared rules to v2 at weight 100")
        events = await asyncio.to_thread(stack.kube.list_objects, EVENTS, stack.namespace, {})
        reasons = [e["reason"] for e in events if e["regarding"]["name"] == "v2" and e["action"] == "Rollout"]
        assert reasons.count("RolloutStep") == 3 and "RolloutSucceeded" in reasons


async def test_rollout_whose_prometheus_gate_fails_half_way_rolls_back(temporal, cluster, tmp_path):
    with prometheus.serving(0.01) as prom:
        async with running_stack(temporal, cluster, controller={}, watcher=True) as stack:
            await grouped_pair(stack)
            gate = {"url": prom.url, "query": 'job:errors:ratio{model="v2"}', "threshold": 0.05}
            started = await start(temporal, stack, write_plan(stack, tmp_path, prometheus=gate))
            handle = temporal.get_workflow_handle_for(RolloutWorkflow.run, str(started["id"]))

            async def at_50() -> bool:
                status: RolloutStatus = await handle.query(RolloutWorkflow.status)
                return status.step == 2

            await until(at_50, "the rollout at 50%", timeout=60, interval=0.2)
            prom.value = 0.3  # the candidate's error rate at 50%
            result: RolloutResult = await asyncio.wait_for(handle.result(), 60)
            assert result.phase == RolloutPhase.ROLLED_BACK, result
            assert result.reason.startswith('gate failed: prometheus (job:errors:ratio{model="v2"} = 0.3')
            assert await weights(stack) == (90, 10)  # the last weights whose gates passed
            status = await handle.query(RolloutWorkflow.status)
            assert [(e.step, e.weights.candidate, e.note) for e in status.timeline][-1] == (2, 10, "rollback")
            print_timeline("rollout with a failing gate", status)
            events = await asyncio.to_thread(stack.kube.list_objects, EVENTS, stack.namespace, {})
            warnings = [
                e["note"] for e in events if e["regarding"]["name"] == "v1" and e["type"] == "Warning"
            ]
            assert any(n.startswith("rolled-back: gate failed: prometheus") for n in warnings), warnings


async def test_rollout_survives_sigkilled_workers_between_steps_and_mid_write(temporal, cluster, tmp_path):
    """The worker is a real process, killed with SIGKILL twice: during a dwell (between steps) and while
    the candidate's weight write of step 2 is held at the proxy (mid-write; the write lands after the
    worker is dead). Each time a new worker carries the rollout on: every step is taken once, the
    lost write is not made again, and the outcome is what it would have been."""
    async with running_stack(temporal, cluster, controller={}, watcher=True) as stack:
        await grouped_pair(stack)
        assert stack.worker is not None
        await stack.worker.stop()  # from here on the worker processes below are the task queue's only ones
        kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig", role="worker")
        env = product_env(temporal, cluster, stack.task_queue, kubeconfig)
        plan = write_plan(stack, tmp_path)
        plan.write_text(plan.read_text().replace("dwell_seconds: 2", "dwell_seconds: 6"))

        with product_process("worker", env, tmp_path / "worker-1.log") as first:
            await logged(first, tmp_path / "worker-1.log", "worker polling task queue")
            started = await start(temporal, stack, plan)
            handle = temporal.get_workflow_handle_for(RolloutWorkflow.run, str(started["id"]))

            async def at(step: int) -> bool:
                status: RolloutStatus = await handle.query(RolloutWorkflow.status)
                return status.step == step

            await until(lambda: at(1), "step 1", timeout=60, interval=0.2)
            first.send_signal(signal.SIGKILL)  # between steps: dwelling at 10%
            await asyncio.to_thread(first.wait, 10)
        held = cluster.faults.inject(
            verb="patch",
            resource="llminferenceservices",
            name="v2",
            user_agent=WORKER_AGENT,
            hang=True,
            times=1,
        )
        with product_process("worker", env, tmp_path / "worker-2.log") as second:
            await logged(second, tmp_path / "worker-2.log", "worker polling task queue")

            async def write_held() -> bool:
                return bool(held.fired > 0)

            await until(write_held, "step 2's write of v2 held at the proxy", timeout=60, interval=0.2)
            second.send_signal(signal.SIGKILL)  # mid-write: v1 has 50, v2's 50 is on its way
            await asyncio.to_thread(second.wait, 10)
        cluster.faults.release(held.id)  # the write goes through, its worker is gone
        with product_process("worker", env, tmp_path / "worker-3.log") as third:
            await logged(third, tmp_path / "worker-3.log", "worker polling task queue")
            result: RolloutResult = await asyncio.wait_for(handle.result(), 120)
            status: RolloutStatus = await handle.query(RolloutWorkflow.status)  # a query needs a worker
        assert result.phase == RolloutPhase.SUCCEEDED, result
        assert await weights(stack) == (0, 100)
        print_timeline("rollout through two SIGKILLed workers", status)
        assert [(e.step, e.weights.candidate) for e in status.timeline] == [
            (0, 0),
            (1, 10),
            (2, 50),
            (3, 100),
        ]
        # Three steps, two services each, and not one weight written twice. A patch may also have lost the
        # race to the router's own status write of the same object (409): that one wrote nothing.
        patches = {
            "verb": "patch",
            "resource": "llminferenceservices",
            "subresource": "",
            "user_agent": WORKER_AGENT,
        }
        codes = [r.code for r in cluster.counter.records(**patches)]
        assert codes.count(200) == 6 and set(codes) <= {200, 409}, codes
