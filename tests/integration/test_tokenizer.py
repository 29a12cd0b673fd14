"""TokenizerReady on the real control plane (KServe #5712; ``controller_int_tokenizer_test.go`` "should
report TokenizerReady status condition" at aaac4e294): the watcher, the worker and its cache as deployed;
the test only does what KServe's workload side and the kubelet would (the scheduler and tokenizer
Deployments and their status) and never signals a workflow itself."""

from __future__ import annotations

import asyncio

import pytest

from llmisvc_core import naming
from llmisvc_core.models.kube import DEPLOYMENT
from tests.builders import presets
from tests.builders.kube import tokenizer_deployment
from tests.integration import world
from tests.integration.harness import conditions_of, running_stack, until
from tests.integration.world import Wire

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"
TOKEN_PRODUCER: Wire = {"config": {"inline": {"plugins": [{"type": "token-producer"}]}}}
ROLLOUT = ("False", "Progressing", "Deployment rollout in progress")


def _row(conditions: dict[str, Wire], type_: str) -> tuple[str, str, str] | None:
    cond = conditions.get(type_)
    return None if cond is None else (cond["status"], cond.get("reason", ""), cond.get("message", ""))


async def test_5712_the_tokenizer_deployment_becoming_available_flips_tokenizer_ready_and_router_ready(
    temporal, cluster
):
    async with running_stack(temporal, cluster, controller={}, watcher=True) as stack:
        await stack.create_service(NAME, router={**presets(), "scheduler": TOKEN_PRODUCER})
        await stack.make_scheduler_ready(NAME)
        tokenizer = await stack.create(DEPLOYMENT, tokenizer_deployment(await stack.service(NAME)))

        async def waiting_for_the_tokenizer() -> dict[str, Wire] | None:
            conditions = await stack.conditions(NAME)
            others = ("HTTPRoutesReady", "InferencePoolReady", "SchedulerWorkloadReady")
            if all(_row(conditions, t) == ("True", "", "") for t in others):
                return conditions if _row(conditions, "TokenizerReady") == ROLLOUT else None
            return None

        conditions = await until(waiting_for_the_tokenizer, "everything but the tokenizer ready")
        assert _row(conditions, "RouterReady") == ROLLOUT  # only the tokenizer holds the router back
        svc = await stack.service(NAME)
        assert [c["name"] for c in svc["status"]["appliedConfigs"]] == [
            "kserve-config-llm-scheduler",
            "kserve-config-llm-tokenizer",
            "kserve-config-llm-router-route",
            "kserve-config-llm-template",
        ]

        await asyncio.to_thread(
            stack.kube.replace_status, DEPLOYMENT, {**tokenizer, "status": world.AVAILABLE_DEPLOYMENT_STATUS}
        )

        async def router_ready() -> dict[str, Wire] | None:
            conditions = conditions_of(await stack.service(NAME))
            return conditions if _row(conditions, "RouterReady") == ("True", "", "") else None

        conditions = await until(
            router_ready, f"the watcher to signal {NAME} for {naming.tokenizer_name(NAME)}"
        )
        assert _row(conditions, "TokenizerReady") == ("True", "", "")

        # The cheap pass keeps its budget: the tokenizer Deployment is read from the worker's cache.
        await asyncio.sleep(0.5)  # the gateway controller's last reaction to the status write
        stack.cluster.counter.reset()
        summary = await stack.reconcile_now(stack.handle(NAME), "resync")
        requests = stack.cluster.counter.records(user_agent="llmisvc-router/")
        assert (summary.outcome, summary.writes, summary.status_written) == ("reconciled", 0, False)
        assert [(r.verb, r.resource) for r in requests if r.verb != "watch"] == []
