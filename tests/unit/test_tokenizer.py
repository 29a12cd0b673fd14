"""TokenizerReady and the tokenizer preset (KServe #5712, 74907c59d, at aaac4e294): ``tokenizer.go``
(``isTokenizerEnabled``, ``inlineSchedulerConfigBytes``, ``shouldDeleteTokenizer``) and its table
``TestIsTokenizerEnabled`` in ``tokenizer_test.go``; ``config_merge.go`` ``combineBaseRefsConfig``
(``configTokenizerName`` after the scheduler preset); ``DetermineRouterReadiness`` in
``llm_inference_service_lifecycle.go``; the conditions ``controller_int_tokenizer_test.go`` expects."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.merge import config_merge
from llmisvc_core.merge.presets import apply_router_presets
from llmisvc_core.models import scheduler_plugins
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.config import Environment, load_router_config
from tests import builders as b
from tests.builders import Wire, plans
from tests.builders.kube import tokenizer_deployment

PRESETS: Wire = {"route": {}, "gateway": {}, "scheduler": {}}
INGRESS = ("kserve", "kserve-ingress-gateway")
V1 = "inference.networking.k8s.io"
TOKEN_PRODUCER = {"config": {"inline": {"plugins": [{"type": "token-producer"}]}}}
ROLLOUT = ("False", "Progressing", "Deployment rollout in progress")


def _args(*args: str, name: str = "main") -> Wire:
    return {"template": {"containers": [{"name": name, "args": list(args)}]}}


def _inline(*types: str) -> Wire:
    return {"config": {"inline": {"plugins": [{"type": t} for t in types]}}}


@pytest.mark.parametrize(
    ("router", "enabled"),
    [
        ({"scheduler": {"tokenizer": {}}}, True),
        ({"scheduler": {"tokenizer": {"template": {}}}}, True),
        ({"scheduler": _inline("token-producer", "precise-prefix-cache-producer")}, True),
        ({"scheduler": _inline("precise-prefix-cache-scorer")}, True),
        ({"scheduler": _inline("prefix-cache-scorer")}, False),
        ({"scheduler": _args("--config-text", '{"plugins":[{"type":"token-producer"}]}')}, True),
        ({"scheduler": _args("--config-text", '{"plugins":[{"type":"precise-prefix-cache-scorer"}]}')}, True),
        (
            {
                "scheduler": {
                    **_inline("prefix-cache-scorer"),
                    **_args("--config-text", '{"plugins":[{"type":"token-producer"}]}'),
                }
            },
            False,
        ),
        ({"scheduler": _args("--config-file", "/etc/epp/config.yaml")}, False),
        ({}, False),
        (None, False),
        ({"scheduler": {}}, False),
        # Beyond upstream's table, the same code paths:
        ({"scheduler": _args("-configText", "plugins:\n- type: token-producer\n")}, True),
        ({"scheduler": _args("--config-text", "plugins: [unclosed")}, False),
        ({"scheduler": _args("--config-text", "plugins: [{type: token-producer}]", name="other")}, False),
        ({"scheduler": {"config": {"inline": "plugins: [{type: token-producer}]"}}}, False),
        ({"scheduler": {"config": {"inline": {"plugins": [{"name": "token-producer"}]}}}}, False),
        ({"scheduler": {"tokenizer": None}}, False),
    ],
    ids=[
        "tokenizer-field-set",
        "tokenizer-field-with-template",
        "token-producer-inline",
        "legacy-precise-prefix-cache-scorer-inline",
        "other-plugins-only",
        "token-producer-in-config-text",
        "legacy-scorer-in-config-text",
        "inline-wins-over-config-text",
        "config-file-not-read",
        "no-scheduler",
        "no-router",
        "empty-scheduler",
        "camel-case-flag-yaml-value",
        "config-text-not-yaml",
        "config-text-outside-main",
        "inline-as-a-string",
        "plugin-named-not-typed",
        "tokenizer-null",
    ],
)
def test_5712_is_tokenizer_enabled(router: Wire | None, enabled: bool) -> None:
    """``TestIsTokenizerEnabled`` (tokenizer_test.go), plus edge cases of ``inlineSchedulerConfigBytes``."""
    scheduler = (router or {}).get("scheduler")
    assert scheduler_plugins.is_tokenizer_enabled(scheduler) is enabled


@pytest.mark.parametrize(
    ("router", "names"),
    [
        ({**PRESETS, "scheduler": TOKEN_PRODUCER}, ["scheduler", "tokenizer", "router-route", "template"]),
        ({"scheduler": {"tokenizer": {}}}, ["scheduler", "tokenizer", "template"]),
        (
            {"scheduler": {**TOKEN_PRODUCER, "pool": {"ref": {"name": "p"}}}, "route": {}},
            ["tokenizer", "router-route", "template"],
        ),
        (
            {"scheduler": _inline("token-producer", "predicted-latency-producer")},
            ["scheduler", "tokenizer", "scheduler-latency-predictor", "template"],
        ),
        (
            {"scheduler": _args("--config-text", "plugins:\n- type: predicted-latency-producer\n")},
            ["scheduler", "scheduler-latency-predictor", "template"],
        ),
        (PRESETS, ["scheduler", "router-route", "template"]),
    ],
    ids=["token-producer", "tokenizer-field", "pool-ref", "with-latency", "latency-in-config-text", "none"],
)
def test_5712_tokenizer_preset_follows_the_scheduler_preset(router: Wire, names: list[str]) -> None:
    """combineBaseRefsConfig: scheduler, tokenizer (with a pool ref too), latency predictor, route, …"""
    assert config_merge.well_known_names({"router": router}, "kserve-") == [
        f"kserve-config-llm-{n}" for n in names
    ]


def _world(*extra: Wire) -> list[Wire]:
    return [b.gateway_class(), b.gateway(INGRESS[1], INGRESS[0], addresses=["203.0.113.50"]), *extra]


def _ready_cluster(svc: Wire, *extra: Wire) -> list[Wire]:
    """The service's first pass carried out, its route, pools and scheduler Deployment then ready."""
    cluster = plans.apply_plan([svc, *_world()], plans.run(svc, *_world()), ("ns", "svc"))
    for obj in cluster:
        if obj["kind"] == "HTTPRoute":
            obj["status"] = {"parents": [b.parent_status(INGRESS[1], INGRESS[0])]}
        if obj["kind"] == "InferencePool":
            key = "parents" if obj["apiVersion"].startswith(V1) else "parent"
            obj["status"] = {key: b.pool_status_parents(INGRESS)}
    scheduler = {"metadata": {"name": "svc-kserve-router-scheduler", "namespace": "ns"}}
    return [*cluster, {"apiVersion": "apps/v1", "kind": "Deployment", **scheduler,
                       "status": {"availableReplicas": 1}}, *extra]  # fmt: skip


def _pass(cluster: list[Wire]) -> Any:
    svc = next(o for o in cluster if o["kind"] == "LLMInferenceService")
    return plans.run(svc, *[o for o in cluster if o is not svc])


def _row(plan: Any, type_: str) -> tuple[str, str, str] | None:
    cond = plans.condition(plan, type_)
    return None if cond is None else (cond["status"], cond.get("reason", ""), cond.get("message", ""))


DEADLINE = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "slow"}
UNAVAILABLE = {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "m"}


@pytest.mark.parametrize(
    ("status", "tokenizer", "router"),
    [
        (None, ROLLOUT, ROLLOUT),
        ({}, ROLLOUT, ROLLOUT),
        ({"availableReplicas": 1}, ("True", "", ""), ("True", "", "")),
        ({"conditions": [DEADLINE]}, ("False", "ProgressDeadlineExceeded", "slow"), None),
        ({"conditions": [UNAVAILABLE]}, ("False", "MinimumReplicasUnavailable", "m"), None),
    ],
    ids=["absent", "no-status-yet", "available", "deadline-exceeded", "unavailable"],
)
def test_5712_tokenizer_ready_follows_the_tokenizer_deployment(
    status: Wire | None, tokenizer: tuple[str, str, str], router: tuple[str, str, str] | None
) -> None:
    """propagateComponentDeploymentStatus on ``<name>-tokenizer``; RouterReady copies a False TokenizerReady
    when every other sub-condition is True."""
    svc = b.service(router={**PRESETS, "scheduler": TOKEN_PRODUCER})
    extra = [] if status is None else [tokenizer_deployment(svc, status)]
    plan = _pass(_ready_cluster(svc, *extra))

    assert _row(plan, "SchedulerWorkloadReady") == ("True", "", "")
    assert _row(plan, "TokenizerReady") == tokenizer
    assert _row(plan, "RouterReady") == (router or tokenizer)
    cond = plans.condition(plan, "TokenizerReady")
    assert cond is not None and cond["severity"] == "Info"


def test_5712_scheduler_workload_ready_comes_first_in_the_rollup() -> None:
    """DetermineRouterReadiness: SchedulerWorkloadReady is looked at before TokenizerReady."""
    svc = b.service(router={**PRESETS, "scheduler": TOKEN_PRODUCER})
    cluster = [o for o in _ready_cluster(svc) if o["metadata"]["name"] != "svc-kserve-router-scheduler"]
    plan = _pass(cluster)

    assert _row(plan, "TokenizerReady") == ROLLOUT
    assert _row(plan, "SchedulerWorkloadReady") == ROLLOUT
    router = plans.condition(plan, "RouterReady")
    assert router is not None and router["status"] == "False"


@pytest.mark.parametrize(
    "router",
    [PRESETS, {**PRESETS, "scheduler": {**TOKEN_PRODUCER, "pool": {"ref": {"name": "mine"}}}}],
    ids=["no-tokenizer-asked-for", "external-pool"],
)
def test_5712_tokenizer_ready_is_absent_and_cleared_without_a_tokenizer(router: Wire) -> None:
    """shouldDeleteTokenizer -> MarkTokenizerUnset: a stale TokenizerReady cannot block RouterReady."""
    stale = {"conditions": [{"type": "TokenizerReady", "status": "False", "reason": "Progressing"}]}
    svc = b.service(router=router, status=stale)
    pool = b.inference_pool("mine", api_version=f"{V1}/v1", namespace="ns")
    plan = plans.run(svc, *_world(pool, tokenizer_deployment(svc, {"availableReplicas": 1})))

    assert plans.condition(plan, "TokenizerReady") is None
    assert not any(c["type"] == "TokenizerReady" for c in plan.status.get("conditions") or [])


@pytest.mark.parametrize("router", [{**PRESETS, "scheduler": TOKEN_PRODUCER}, PRESETS, {}], ids=str)
def test_5712_a_stopped_service_has_tokenizer_ready_stopped(router: Wire) -> None:
    """reconcileTokenizerDeployment marks every stopped service ``Stopped``, a tokenizer asked for or not."""
    plan = plans.run(b.service(router=router, stopped=True), *_world())

    assert _row(plan, "TokenizerReady") == ("False", "Stopped", "Service is stopped")


def test_5712_applied_configs_name_the_tokenizer_preset_after_the_scheduler() -> None:
    plan = plans.run(b.service(router={**PRESETS, "scheduler": TOKEN_PRODUCER}), *_world())

    assert [c["name"] for c in plan.status["appliedConfigs"]] == [
        "kserve-config-llm-scheduler",
        "kserve-config-llm-tokenizer",
        "kserve-config-llm-router-route",
        "kserve-config-llm-template",
    ]
    assert all(c["source"] == "Preset" for c in plan.status["appliedConfigs"])


def _merged_tokenizer(router: Wire, enable_tls: bool = False) -> Wire:
    env = Environment()
    config = load_router_config(None, env).model_copy(update={"enable_tls": enable_tls})
    svc = LLMInferenceService.model_validate(b.service(router=router))
    merged = apply_router_presets(svc, config, env)
    scheduler = merged.to_wire()["spec"]["router"]["scheduler"]
    return dict(scheduler["tokenizer"]["template"])


def test_5712_user_tokenizer_template_merges_into_the_preset_by_container_name() -> None:
    """``scheduler.tokenizer.template`` is a PodSpec: containers merge by name, new ones first."""
    template = {"containers": [{"name": "sidecar"}, {"name": "main", "resources": {"limits": {"cpu": "2"}}}]}
    merged = _merged_tokenizer({"scheduler": {"tokenizer": {"template": template}}})

    assert [c["name"] for c in merged["containers"]] == ["sidecar", "main"]
    main = merged["containers"][1]
    assert main["resources"] == {
        "requests": {"cpu": "1", "memory": "4Gi"},
        "limits": {"cpu": "2", "memory": "12Gi"},
    }
    assert main["image"].startswith("docker.io/vllm/vllm-openai-cpu:v0.23.0")
    assert {v["name"] for v in merged["volumes"]} == {"tmp-dir", "tls-certs"}


@pytest.mark.parametrize(("tls", "scheme"), [(False, "HTTP"), (True, "HTTPS")])
def test_5712_tokenizer_preset_templates_render(tls: bool, scheme: str) -> None:
    merged = _merged_tokenizer({"scheduler": {"tokenizer": {}}}, enable_tls=tls)

    main = merged["containers"][0]
    assert main["readinessProbe"]["httpGet"]["scheme"] == scheme
    assert ("--ssl-certfile /var/run/kserve/tls/tls.crt" in main["command"][2]) is tls
    secret = next(v for v in merged["volumes"] if v["name"] == "tls-certs")["secret"]
    assert secret == {"secretName": "svc-kserve-self-signed-certs"}
