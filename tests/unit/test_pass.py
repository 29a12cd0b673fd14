"""Whole passes over a snapshot (spec section 2 and the controller-level edge cases 56-72, 79-84)."""

from __future__ import annotations

from llmisvc_core.models.kube import KNOWN_TYPES, POOL_V1, POOL_V1ALPHA2
from llmisvc_core.planner.plan import PassPlan
from tests import builders as b
from tests.builders import Wire, plans

PRESETS: Wire = {"route": {}, "gateway": {}, "scheduler": {}}
INGRESS = ("kserve", "kserve-ingress-gateway")
LLM = "inference.networking.x-k8s.io"
V1 = "inference.networking.k8s.io"


def _world() -> list[Wire]:
    return [b.gateway_class(), b.gateway(INGRESS[1], INGRESS[0], addresses=["203.0.113.50"])]


def _pool_backends(route: Wire) -> list[Wire]:
    return [
        ref
        for rule in route["spec"]["rules"]
        for ref in rule.get("backendRefs", [])
        if ref.get("kind") == "InferencePool"
    ]


def _converge(svc: Wire, objects: list[Wire], passes: int = 3) -> tuple[list[Wire], PassPlan]:
    """Carry out ``passes`` plans in a row; returns the cluster and the last plan."""
    cluster = [svc, *objects]
    plan = PassPlan()
    for _ in range(passes):
        current = next(o for o in cluster if o["kind"] == "LLMInferenceService")
        plan = plans.run(current, *[o for o in cluster if o is not current])
        cluster = plans.apply_plan(cluster, plan, ("ns", "svc"))
    return cluster, plan


def test_case_56_presets_create_the_managed_route_pools_and_epp_service() -> None:
    plan = plans.run(b.service(router=PRESETS), *_world())
    assert plan.outcome == "reconciled"
    route = plans.applied(plan, "HTTPRoute", "svc-kserve-route")[0]
    assert route["metadata"]["labels"] == {
        "app.kubernetes.io/component": "llminferenceservice-router",
        "app.kubernetes.io/name": "svc",
        "app.kubernetes.io/part-of": "llminferenceservice",
    }
    owner = route["metadata"]["ownerReferences"][0]
    assert (owner["uid"], owner["controller"], owner["kind"]) == (b.UID, True, "LLMInferenceService")
    assert route["spec"]["parentRefs"][0]["name"] == "kserve-ingress-gateway"
    assert {r["group"] for r in _pool_backends(route)} == {LLM}  # a fresh route starts on v1alpha2
    services = [
        r for rule in route["spec"]["rules"] for r in rule["backendRefs"] if r.get("kind") == "Service"
    ]
    assert {s["name"] for s in services} == {"svc-kserve-workload-svc"}
    epp = plans.applied(plan, "Service", "svc-epp-service")[0]
    assert [(p["name"], p["port"]) for p in epp["spec"]["ports"]] == [
        ("grpc", 9002),
        ("grpc-health", 9003),
        ("metrics", 9090),
        ("zmq", 5557),
    ]
    pools = plans.applied(plan, "InferencePool")
    assert sorted(p["apiVersion"] for p in pools) == [f"{V1}/v1", f"{LLM}/v1alpha2"]  # case 57
    assert all(p["metadata"]["name"] == "svc-inference-pool" for p in pools)


def test_case_56_service_becomes_ready_once_statuses_are_ready() -> None:
    cluster, _ = _converge(b.service(router=PRESETS), _world(), passes=1)
    for obj in cluster:
        if obj["kind"] == "HTTPRoute":
            obj["status"] = {"parents": [b.parent_status(INGRESS[1], INGRESS[0])]}
        if obj["kind"] == "InferencePool":
            key = "parents" if obj["apiVersion"].startswith(V1) else "parent"
            obj["status"] = {key: b.pool_status_parents(INGRESS[::1])}
    cluster.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "svc-kserve-router-scheduler", "namespace": "ns"},
            "status": {"availableReplicas": 1},
        }
    )
    svc = next(o for o in cluster if o["kind"] == "LLMInferenceService")
    plan = plans.run(svc, *[o for o in cluster if o is not svc])
    for type_ in ("HTTPRoutesReady", "InferencePoolReady", "SchedulerWorkloadReady", "RouterReady"):
        cond = plans.condition(plan, type_)
        assert cond is not None and cond["status"] == "True", (type_, cond)
    assert plan.status["url"] == "http://203.0.113.50/ns/svc"


def test_case_58_migration_annotation_switches_default_backends_to_v1() -> None:
    cluster, _ = _converge(b.service(router=PRESETS), _world(), passes=1)
    route = next(o for o in cluster if o["kind"] == "HTTPRoute")
    route["metadata"]["annotations"] = {"serving.kserve.io/inference-pool-migrated": "v1"}
    svc = next(o for o in cluster if o["kind"] == "LLMInferenceService")
    plan = plans.run(svc, *[o for o in cluster if o is not svc])
    updated = plans.applied(plan, "HTTPRoute")[0]
    assert {r["group"] for r in _pool_backends(updated)} == {V1}
    assert updated["metadata"]["annotations"]["serving.kserve.io/inference-pool-migrated"] == "v1"


def test_case_59_invalid_kind_from_the_gateway_migrates_and_the_lock_holds() -> None:
    cluster, _ = _converge(b.service(router=PRESETS), _world(), passes=1)
    route = next(o for o in cluster if o["kind"] == "HTTPRoute")
    route["status"] = {
        "parents": [
            b.parent_status(
                INGRESS[1],
                INGRESS[0],
                resolved="False",
                reason="InvalidKind",
                message=f"Group is invalid: {LLM}",
            )
        ]
    }
    cluster, _ = _converge(cluster[0], cluster[1:], passes=1)
    migrated = next(o for o in cluster if o["kind"] == "HTTPRoute")
    assert {r["group"] for r in _pool_backends(migrated)} == {V1}
    # Later the gateway reports the v1 group as fine: the lock keeps v1 and nothing is rewritten.
    migrated["status"] = {"parents": [b.parent_status(INGRESS[1], INGRESS[0], generation=2)]}
    _, again = _converge(cluster[0], cluster[1:], passes=1)
    assert plans.applied(again, "HTTPRoute") == []


def test_case_61_without_scheduler_backends_point_at_the_workload_service() -> None:
    plan = plans.run(b.service(router={"route": {}, "gateway": {}}), *_world())
    route = plans.applied(plan, "HTTPRoute")[0]
    assert _pool_backends(route) == []
    assert plans.applied(plan, "InferencePool") == []
    assert plans.condition(plan, "InferencePoolReady") is None


def test_case_63_switching_to_route_refs_deletes_the_managed_route() -> None:
    cluster, _ = _converge(b.service(router={"route": {}, "gateway": {}}), _world(), passes=1)
    svc = cluster[0]
    svc["spec"]["router"] = {
        "route": {"http": {"refs": [{"name": "custom"}]}},
        "gateway": {"refs": [{"name": INGRESS[1], "namespace": INGRESS[0]}]},
    }
    custom = b.http_route(
        "custom", parents=[INGRESS], status_parents=[b.parent_status(INGRESS[1], INGRESS[0])]
    )
    plan = plans.run(svc, *cluster[1:], custom)
    assert [(d.kind, d.name) for d in plan.delete] == [("HTTPRoute", "svc-kserve-route")]
    cond = plans.condition(plan, "HTTPRoutesReady")
    assert cond is not None and cond["status"] == "True"


def test_case_64_removing_the_router_deletes_the_route_and_reports_the_workload_address() -> None:
    cluster, _ = _converge(b.service(router={"route": {}, "gateway": {}}), _world(), passes=1)
    svc = cluster[0]
    del svc["spec"]["router"]
    plan = plans.run(svc, *cluster[1:])
    assert [(d.kind, d.name) for d in plan.delete] == [("HTTPRoute", "svc-kserve-route")]
    assert plan.status["addresses"] == [{"url": "http://svc-kserve-workload-svc.ns.svc.cluster.local"}]
    assert "router" not in plan.status
    assert "url" not in plan.status  # P4: the stale URL is cleared
    router = plans.condition(plan, "RouterReady")
    assert router is not None and router["status"] == "True"


def test_case_72_stop_deletes_route_pools_and_epp_service_and_marks_stopped() -> None:
    cluster, _ = _converge(b.service(router=PRESETS), _world(), passes=1)
    b.stopped(cluster[0], "TRUE")
    plan = plans.run(cluster[0], *cluster[1:])
    assert sorted((d.kind, d.api_version) for d in plan.delete) == [
        ("HTTPRoute", "gateway.networking.k8s.io/v1"),
        ("InferencePool", f"{V1}/v1"),
        ("InferencePool", f"{LLM}/v1alpha2"),
        ("Service", "v1"),
    ]
    for type_ in (
        "GatewaysReady",
        "HTTPRoutesReady",
        "InferencePoolReady",
        "SchedulerWorkloadReady",
        "RouterReady",
    ):
        cond = plans.condition(plan, type_)
        assert cond is not None and (cond["status"], cond["reason"], cond["message"]) == (
            "False",
            "Stopped",
            "Service is stopped",
        ), type_
    assert not {"router", "addresses", "url", "address"} & plan.status.keys()


def test_p6_stop_is_carried_out_even_with_invalid_references() -> None:
    cluster, _ = _converge(b.service(router={"route": {}, "gateway": {}}), _world(), passes=1)
    svc = b.stopped(cluster[0])
    svc["spec"]["router"]["gateway"] = {"refs": [{"name": "deleted-gateway"}]}
    plan = plans.run(svc, *cluster[1:])
    assert [(d.kind, d.name) for d in plan.delete] == [("HTTPRoute", "svc-kserve-route")]
    cond = plans.condition(plan, "RouterReady")
    assert cond is not None and cond["reason"] == "Stopped"


def test_r_stop_5_resuming_recreates_the_route_on_v1alpha2() -> None:
    cluster, _ = _converge(b.service(router=PRESETS), _world(), passes=1)
    cluster, _ = _converge(b.stopped(cluster[0]), cluster[1:], passes=1)
    del cluster[0]["metadata"]["annotations"]["serving.kserve.io/stop"]
    plan = plans.run(cluster[0], *cluster[1:])
    route = plans.applied(plan, "HTTPRoute")[0]
    assert {r["group"] for r in _pool_backends(route)} == {LLM}


def test_case_79_no_router_address_scheme_follows_tls_setting() -> None:
    plan = plans.run(b.service())
    assert plan.status["addresses"] == [{"url": "http://svc-kserve-workload-svc.ns.svc.cluster.local"}]
    for type_ in ("GatewaysReady", "HTTPRoutesReady", "InferencePoolReady"):
        assert plans.condition(plan, type_) is None
    router = plans.condition(plan, "RouterReady")
    assert router is not None and router["status"] == "True"
    tls = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "kserve"},
        "data": {"ingress": '{"ingressGateway": "kserve/gw", "enableLLMInferenceServiceTLS": true}'},
    }
    plan = plans.run(b.service(), tls)
    assert plan.status["addresses"] == [{"url": "https://svc-kserve-workload-svc.ns.svc.cluster.local"}]


def test_case_81_scheduler_without_route_waits_for_a_gateway_forever() -> None:
    """Q23 where no gateway is named at all (no route, no ``gateway.refs``): decision P17 has none to add."""
    plan = plans.run(b.service(router={"scheduler": {}}), *_world())
    cond = plans.condition(plan, "InferencePoolReady")
    assert cond is not None
    assert (cond["reason"], cond["message"]) == (
        "WaitingForGateway",
        "Inference Pool ns/svc-inference-pool exists but no Gateway controller has accepted it yet",
    )


def test_p17_a_scheduler_with_gateway_refs_and_no_route_is_ready_once_its_gateway_accepts_the_pool() -> None:
    """KServe PR #5972 (open; issues #5986, #6072): ``gateway.refs`` join the pool's readiness scope."""
    router = {"scheduler": {}, "gateway": {"refs": [{"name": INGRESS[1], "namespace": INGRESS[0]}]}}
    cluster, _ = _converge(b.service(router=router), _world(), passes=1)
    waiting = plans.run(cluster[0], *cluster[1:])
    cond = plans.condition(waiting, "InferencePoolReady")
    assert cond is not None and cond["reason"] == "WaitingForGateway"
    for obj in cluster:
        if obj["kind"] == "InferencePool":
            key = "parents" if obj["apiVersion"].startswith(V1) else "parent"
            obj["status"] = {key: b.pool_status_parents(INGRESS)}
    plan = plans.run(cluster[0], *cluster[1:])
    cond = plans.condition(plan, "InferencePoolReady")
    assert cond is not None and cond["status"] == "True", cond
    assert plans.applied(plan, "HTTPRoute") == []


def test_p17_a_pool_accepted_only_by_a_gateway_outside_the_refs_stays_waiting() -> None:
    router = {"scheduler": {}, "gateway": {"refs": [{"name": INGRESS[1], "namespace": INGRESS[0]}]}}
    cluster, _ = _converge(b.service(router=router), _world(), passes=1)
    for obj in cluster:
        if obj["kind"] == "InferencePool":
            key = "parents" if obj["apiVersion"].startswith(V1) else "parent"
            obj["status"] = {key: b.pool_status_parents(("other-ns", "other-gateway"))}
    cond = plans.condition(plans.run(cluster[0], *cluster[1:]), "InferencePoolReady")
    assert cond is not None and cond["reason"] == "WaitingForGateway"


def test_p3_only_installed_pool_versions_are_reconciled() -> None:
    from llmisvc_core.models.kube import KNOWN_TYPES

    installed = set(KNOWN_TYPES.values()) - {POOL_V1ALPHA2}
    plan = plans.run(b.service(router=PRESETS), *_world(), installed=installed)
    assert [p["apiVersion"] for p in plans.applied(plan, "InferencePool")] == [f"{V1}/v1"]
    installed = set(KNOWN_TYPES.values()) - {POOL_V1}
    plan = plans.run(b.service(router=PRESETS), *_world(), installed=installed)
    assert [p["apiVersion"] for p in plans.applied(plan, "InferencePool")] == [f"{LLM}/v1alpha2"]


def test_why_6_p3_extended_new_route_backends_use_the_only_installed_pool_group() -> None:
    installed = set(KNOWN_TYPES.values()) - {POOL_V1ALPHA2}
    plan = plans.run(b.service(router=PRESETS), *_world(), installed=installed)
    (route,) = plans.applied(plan, "HTTPRoute")
    assert {ref["group"] for ref in _pool_backends(route)} == {V1}
    installed = set(KNOWN_TYPES.values()) - {POOL_V1}
    plan = plans.run(b.service(router=PRESETS), *_world(), installed=installed)
    (route,) = plans.applied(plan, "HTTPRoute")
    assert {ref["group"] for ref in _pool_backends(route)} == {LLM}
    # With both installed a new route still starts on v1alpha2 (R-EXP-7).
    (route,) = plans.applied(plans.run(b.service(router=PRESETS), *_world()), "HTTPRoute")
    assert {ref["group"] for ref in _pool_backends(route)} == {LLM}


def test_p7_empty_target_ports_fail_the_scheduler_step_without_crashing() -> None:
    # The merge omits an empty list the user gives, so only a scheduler config without targetPorts
    # (here a namespace-local one overriding KServe's) reaches the check.
    pool = {"spec": {"endpointPickerRef": {"kind": "Service", "name": "svc-epp-service"}, "targetPorts": []}}
    scheduler_config = b.llmisvc_config(
        "kserve-config-llm-scheduler",
        "ns",
        router={"scheduler": {"pool": pool, "template": {"containers": []}}},
    )
    router: Wire = {"route": {}, "gateway": {}, "scheduler": {}}
    plan = plans.run(b.service(router=router), *_world(), scheduler_config)
    assert plan.outcome == "failed"
    assert plan.message is not None and plan.message.startswith("failed to reconcile scheduler: ")
    assert "targetPorts is empty" in plan.message
    cond = plans.condition(plan, "SchedulerWorkloadReady")
    assert cond is not None and cond["reason"] == "SchedulerReconcileError"
    assert plans.applied(plan, "HTTPRoute") == []  # after X11 the route is not reconciled


def test_r_crud_2_a_route_owned_by_someone_else_is_not_overwritten() -> None:
    foreign = b.http_route("svc-kserve-route", parents=[INGRESS], owner_uid="someone-else")
    plan = plans.run(b.service(router={"route": {}, "gateway": {}}), *_world(), foreign)
    assert plan.outcome == "failed"
    assert plan.message == (
        "failed to reconcile HTTP routes: failed to reconcile HTTPRoute ns/svc-kserve-route: "
        "failed to update "
        "v1.HTTPRoute ns/svc-kserve-route: it is not controlled by v1alpha2.LLMInferenceService ns/svc"
    )
    assert plan.apply == []


def test_r_crud_7_deleting_a_route_owned_by_someone_else_fails() -> None:
    foreign = b.http_route("svc-kserve-route", parents=[INGRESS], owner_uid="someone-else")
    plan = plans.run(b.stopped(b.service(router={"route": {}})), *_world(), foreign)
    assert plan.outcome == "failed"
    assert plan.message is not None and plan.message.endswith(
        "cannot delete v1.HTTPRoute ns/svc-kserve-route: not owned by v1alpha2.LLMInferenceService ns/svc"
    )


def test_appendix_g_a_second_pass_over_the_result_writes_nothing() -> None:
    _, last = _converge(b.service(router=PRESETS), _world(), passes=2)
    assert last.apply == [] and last.delete == []


def test_e4_unchanged_conditions_keep_their_transition_time() -> None:
    svc = b.service(router={"route": {}, "gateway": {}})
    first = plans.run(svc, *_world(), now=b.NOW)
    svc["status"] = first.status
    second = plans.run(svc, *_world(), now=b.LATER)
    assert first.status["conditions"] == second.status["conditions"]


def test_deleted_service_is_never_routed() -> None:
    svc = b.service(router=PRESETS)
    svc["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    plan = plans.run(svc, *_world())
    assert plan.apply == [] and plan.delete == [] and plan.status == {}
