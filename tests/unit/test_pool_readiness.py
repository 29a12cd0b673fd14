"""InferencePoolReady (spec 3.8.1) and status.router.scheduler (R-POOL-9): catalogue rows 4.3, edge cases
42, 52, 53, 73 and 81."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.models.inference_pool import InferencePool, InferencePoolV1Alpha2
from llmisvc_core.models.llmisvc import LLMInferenceService, RouterStatus, ServiceCondition
from llmisvc_core.readiness import pools
from llmisvc_core.world.conditions import Conditions
from tests import builders as b

NOW = "2026-01-01T00:00:00Z"
CURRENT = ("gw-ns", "current-gateway")


def accepted(
    status: str = "True", reason: str = "Accepted", message: str = "", gen: int = 0
) -> dict[str, Any]:
    return {
        "type": "Accepted",
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": gen,
    }


def parent(name: str, namespace: str | None, *conditions: dict[str, Any], **ref: Any) -> dict[str, Any]:
    parent_ref: dict[str, Any] = {
        "group": "gateway.networking.k8s.io",
        "kind": "Gateway",
        "name": name,
        **ref,
    }
    if namespace is not None:
        parent_ref["namespace"] = namespace
    return {"parentRef": parent_ref, "conditions": list(conditions)}


def v1_pool(*parents: dict[str, Any], name: str = "svc-inference-pool", generation: int = 1) -> InferencePool:
    meta = {"name": name, "namespace": "test-ns", "generation": generation}
    return InferencePool.from_wire({"metadata": meta, "status": {"parents": list(parents)}})


def v1alpha2_pool(*parents: dict[str, Any], generation: int = 1) -> InferencePoolV1Alpha2:
    meta = {"name": "svc-inference-pool", "namespace": "test-ns", "generation": generation}
    return InferencePoolV1Alpha2.from_wire({"metadata": meta, "status": {"parent": list(parents)}})


def service(
    scheduler: dict[str, Any] | None = None,
    *,
    router: bool = True,
    stopped: bool = False,
    routed: bool = True,
) -> LLMInferenceService:
    wire = b.service(
        "svc",
        "test-ns",
        uid=None,
        generation=None,
        stopped=stopped,
        router={"scheduler": scheduler} if router else None,
    )
    svc = LLMInferenceService.from_wire(wire)
    if routed:  # routing status exists, as after R-ST-5 with routes
        svc.status.router = RouterStatus(gateways=[])
    return svc


EXTERNAL = {"pool": {"ref": {"name": "my-pool"}}}
MANAGED = {"template": {"containers": [{"name": "main"}]}}


def conds_for(svc: LLMInferenceService) -> Conditions:
    old = ServiceCondition(
        type="InferencePoolReady", status="False", severity="Info", reason="Old", message="old"
    )
    svc.status.conditions = [old]
    return Conditions(svc.status, NOW)


def row(conds: Conditions, type_: str = "InferencePoolReady") -> tuple[str, str, str] | None:
    found = conds.get(type_)
    return None if found is None else (found.status, found.reason or "", found.message or "")


# --- R-POOL-5 (edge case 52, v1 and v1alpha2 alike) ------------------------------------------------

OLD_REJECTED = parent("old-gateway", "gw-ns", accepted("False", "HTTPRouteNotAccepted"))
CURRENT_ACCEPTED = parent("current-gateway", "gw-ns", accepted())
CURRENT_REJECTED = parent("current-gateway", "gw-ns", accepted("False", "HTTPRouteNotAccepted"))

READY_FOR_GATEWAYS_CASES = [
    ([OLD_REJECTED, CURRENT_ACCEPTED], [CURRENT], 1, True),
    ([CURRENT_REJECTED], [CURRENT], 1, False),
    ([parent("old-gateway", "old-ns", accepted())], [("ingress-ns", "new-gateway")], 1, False),
    ([CURRENT_ACCEPTED], [], 1, False),
    ([parent("gateway-a", "gw-ns", accepted())], [("gw-ns", "gateway-a"), ("gw-ns", "gateway-b")], 1, False),
    ([], [CURRENT], 1, False),
    ([parent("current-gateway", "gw-ns", {"type": "ResolvedRefs", "status": "True"})], [CURRENT], 1, False),
    ([parent("current-gateway", "gw-ns", accepted(gen=3))], [CURRENT], 5, False),
    ([parent("current-gateway", "gw-ns", accepted(gen=5))], [CURRENT], 5, True),
    ([parent("old-gateway", "gw-ns", accepted()), CURRENT_REJECTED], [CURRENT], 1, False),
    ([parent("gw", None, accepted())], [("test-ns", "gw")], 1, True),
    ([parent("gw", "", accepted())], [("test-ns", "gw")], 1, True),
    (
        [parent("current-gateway", "gw-ns", accepted(), group="networking.istio.io", kind="Mesh")],
        [CURRENT],
        1,
        True,
    ),
]
READY_FOR_GATEWAYS_IDS = [
    "old-rejected-ignored",
    "current-rejected",
    "only-old-gateway-parent",
    "no-keys",
    "second-key-unclaimed",
    "no-parents",
    "only-resolved-refs",
    "stale-accepted",
    "current-generation",
    "old-accepted-does-not-help",
    "absent-namespace-is-pools",
    "empty-namespace-is-pools",
    "group-and-kind-ignored",
]


@pytest.mark.parametrize(
    ("parents", "keys", "generation", "ready"), READY_FOR_GATEWAYS_CASES, ids=READY_FOR_GATEWAYS_IDS
)
def test_r_pool_5_v1_ready_for_gateways_edge_52(parents, keys, generation, ready):
    assert pools.is_pool_ready_for_gateways(v1_pool(*parents, generation=generation), keys) is ready


@pytest.mark.parametrize(
    ("parents", "keys", "generation", "ready"), READY_FOR_GATEWAYS_CASES, ids=READY_FOR_GATEWAYS_IDS
)
def test_r_pool_5_v1alpha2_ready_for_gateways_edge_52(parents, keys, generation, ready):
    assert pools.is_pool_ready_for_gateways(v1alpha2_pool(*parents, generation=generation), keys) is ready


# --- R-POOL-10 (edge case 53) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parents", "generation", "ready"),
    [
        ([], 1, False),
        ([parent("a", "ns", accepted())], 1, True),
        ([parent("a", "ns", accepted("False", "NotSupportedByParent"))], 1, False),
        ([parent("a", "ns", {"type": "SomeOtherCondition", "status": "True"})], 1, False),
        ([parent("a", "ns", accepted(gen=3))], 5, False),
        ([parent("a", "ns", accepted()), parent("b", "ns", accepted())], 1, True),
        (
            [parent("a", "ns", accepted()), parent("b", "ns", accepted("False", "HTTPRouteNotAccepted"))],
            1,
            False,
        ),
    ],
    ids=[
        "no-parents",
        "accepted",
        "rejected",
        "other-condition-only",
        "stale",
        "two-accepted",
        "one-of-two-rejected",
    ],
)
def test_r_pool_10_unscoped_readiness_edge_53(parents, generation, ready):
    assert pools.is_pool_ready(v1_pool(*parents, generation=generation)) is ready
    assert pools.is_pool_ready(v1alpha2_pool(*parents, generation=generation)) is ready


# --- R-POOL-1, R-POOL-2 ----------------------------------------------------------------------------


def test_r_pool_1_stopped_service_marks_pool_stopped():
    svc = service(MANAGED, stopped=True)
    conds = conds_for(svc)
    assert pools.evaluate_pools(conds, svc, [CURRENT], v1_pool=v1_pool(CURRENT_ACCEPTED)) is None
    assert row(conds) == ("False", "Stopped", "Service is stopped")


@pytest.mark.parametrize(
    ("router", "scheduler"), [(False, None), (True, None)], ids=["no-router", "no-scheduler"]
)
def test_r_pool_2_no_scheduler_unsets_pool_ready(router, scheduler):
    svc = service(scheduler, router=router)
    conds = conds_for(svc)
    assert pools.evaluate_pools(conds, svc, [CURRENT], v1_pool=v1_pool(CURRENT_ACCEPTED)) is None
    assert row(conds) is None
    assert svc.status.router is not None and svc.status.router.scheduler is None


# --- R-POOL-3 external pool ------------------------------------------------------------------------


def test_r_pool_3_missing_external_pool_is_a_fetch_error_and_fails_the_pass():
    svc = service(EXTERNAL)
    conds = conds_for(svc)
    error = pools.evaluate_pools(conds, svc, [CURRENT], external_pool=None, v1_pool=v1_pool(CURRENT_ACCEPTED))
    expected = (
        "failed to fetch referenced Inference Pool test-ns/my-pool: "
        'inferencepools.inference.networking.k8s.io "my-pool" not found'
    )
    assert error == expected
    assert row(conds) == ("False", "InferencePoolFetchError", expected)
    assert svc.status.router is not None and svc.status.router.scheduler is None


def test_r_pool_3_external_pool_accepted_is_ready_and_recorded_q3():
    svc = service(EXTERNAL)
    conds = conds_for(svc)
    pool = v1_pool(CURRENT_ACCEPTED, name="my-pool")
    assert pools.evaluate_external_pool(conds, svc, pool, [CURRENT]) is None
    assert row(conds) == ("True", "", "")
    assert svc.status.to_wire()["router"]["scheduler"] == {
        "inferencePool": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "my-pool"},
        "service": {"group": "", "kind": "Service", "name": "svc-epp-service"},
    }


# --- R-POOL-6 verdicts (shared by external and managed v1 pools) ------------------------------------


@pytest.mark.parametrize(
    ("parents", "keys", "generation", "expected"),
    [
        (
            [parent("other", "gw-ns", accepted())],
            [CURRENT],
            1,
            (
                "WaitingForGateway",
                "Inference Pool test-ns/my-pool exists but no Gateway controller has accepted it yet",
            ),
        ),
        (
            [CURRENT_ACCEPTED],
            [CURRENT, ("gw-ns", "second")],
            1,
            (
                "WaitingForGateway",
                "Inference Pool test-ns/my-pool is not yet accepted by gateway gw-ns/second",
            ),
        ),
        (
            [parent("current-gateway", "gw-ns", accepted("False", "HTTPRouteNotAccepted", "no route"))],
            [CURRENT],
            1,
            (
                "InferencePoolNotReady",
                'test-ns/my-pool: Accepted="False" (reason "HTTPRouteNotAccepted", message "no route")',
            ),
        ),
        (
            [parent("current-gateway", "gw-ns", accepted(message="ok", gen=2))],
            [CURRENT],
            3,
            ("InferencePoolNotReady", 'test-ns/my-pool: Accepted="True" (reason "Accepted", message "ok")'),
        ),
        (
            [parent("current-gateway", "gw-ns", {"type": "ResolvedRefs", "status": "True"})],
            [CURRENT],
            1,
            ("InferencePoolNotReady", "The inference pool test-ns/my-pool is not ready"),
        ),
        (
            [
                parent("current-gateway", "gw-ns"),
                parent("b", "gw-ns", accepted("Unknown", "Pending", 'a "b"\n')),
            ],
            [CURRENT, ("gw-ns", "b")],
            1,
            (
                "InferencePoolNotReady",
                'test-ns/my-pool: Accepted="Unknown" (reason "Pending", message "a \\"b\\"\\n")',
            ),
        ),
    ],
    ids=[
        "no-relevant-parent",
        "key-not-yet-accepted",
        "rejected",
        "stale-accepted",
        "accepted-missing",
        "skips-parent-without-accepted-go-quoted",
    ],
)
def test_r_pool_6_external_pool_verdicts(parents, keys, generation, expected):
    svc = service(EXTERNAL)
    conds = conds_for(svc)
    pool = v1_pool(*parents, name="my-pool", generation=generation)
    assert pools.evaluate_external_pool(conds, svc, pool, keys) is None
    assert row(conds) == ("False", *expected)


def test_r_pool_6_verdict_names_the_fetched_pool_object():
    svc = service(MANAGED)
    conds = conds_for(svc)
    pool = InferencePool.from_wire({"metadata": {"name": "svc-inference-pool", "namespace": "elsewhere"}})
    pools.evaluate_managed_pools(conds, svc, pool, None, [CURRENT])
    assert row(conds) == (
        "False",
        "WaitingForGateway",
        "Inference Pool elsewhere/svc-inference-pool exists but no Gateway controller has accepted it yet",
    )


# --- R-POOL-4, R-POOL-7 managed pools --------------------------------------------------------------

POOL = "test-ns/svc-inference-pool"


@pytest.mark.parametrize(
    ("v1", "v1alpha2", "expected"),
    [
        (v1_pool(CURRENT_ACCEPTED), None, ("True", "", "")),
        (v1_pool(CURRENT_REJECTED), v1alpha2_pool(CURRENT_ACCEPTED), ("True", "", "")),
        (None, v1alpha2_pool(CURRENT_ACCEPTED), ("True", "", "")),
        (
            None,
            None,
            (
                "False",
                "InferencePoolFetchError",
                f"Inference Pool {POOL} not found (checked v1 and v1alpha2)",
            ),
        ),
        (
            v1_pool(),
            v1alpha2_pool(CURRENT_REJECTED),
            (
                "False",
                "WaitingForGateway",
                f"Inference Pool {POOL} exists but no Gateway controller has accepted it yet",
            ),
        ),
        (
            None,
            v1alpha2_pool(),
            (
                "False",
                "WaitingForGateway",
                f"Inference Pool {POOL} exists but no Gateway controller has accepted it yet",
            ),
        ),
        (
            None,
            v1alpha2_pool(
                parent("elsewhere", "gw-ns", accepted()), parent("current-gateway", "gw-ns", accepted())
            ),
            ("True", "", ""),
        ),
        (
            None,
            v1alpha2_pool(
                parent("current-gateway", "gw-ns", accepted("False", "NotSupportedByGateway", "nope"))
            ),
            (
                "False",
                "InferencePoolNotReady",
                f'{POOL}: Accepted="False" (reason "NotSupportedByGateway", message "nope")',
            ),
        ),
        (
            None,
            v1alpha2_pool(parent("current-gateway", "gw-ns")),
            ("False", "InferencePoolNotReady", f"The inference pool {POOL} is not ready"),
        ),
    ],
    ids=[
        "v1-ready",
        "v1alpha2-ready-is-enough",
        "only-v1alpha2-ready",
        "both-absent-r-pool-4-4",
        "v1-reported-first",
        "v1alpha2-waiting-r-pool-7",
        "v1alpha2-extra-parent-ignored",
        "v1alpha2-rejected-r-pool-7",
        "v1alpha2-accepted-missing-r-pool-7",
    ],
)
def test_r_pool_4_managed_pools(v1, v1alpha2, expected):
    svc = service(MANAGED)
    conds = conds_for(svc)
    pools.evaluate_managed_pools(conds, svc, v1, v1alpha2, [CURRENT])
    assert row(conds) == expected


def test_r_pool_4_managed_pool_is_recorded_even_when_absent():
    svc = service({})
    conds = conds_for(svc)
    assert pools.evaluate_pools(conds, svc, [CURRENT]) is None
    assert svc.status.to_wire()["router"]["scheduler"] == {
        "inferencePool": {
            "group": "inference.networking.k8s.io",
            "kind": "InferencePool",
            "name": "svc-inference-pool",
        },
        "service": {"group": "", "kind": "Service", "name": "svc-epp-service"},
    }


def test_r_pool_4_managed_pool_records_the_custom_epp_service():
    svc = service({"pool": {"spec": {"endpointPickerRef": {"name": "my-epp"}}}})
    pools.evaluate_managed_pools(conds_for(svc), svc, None, None, [CURRENT])
    assert svc.status.router is not None and svc.status.router.scheduler is not None
    service_ref = svc.status.router.scheduler.service
    assert service_ref is not None and service_ref.name == "my-epp"


def test_r_pool_8_scheduler_without_route_waits_for_a_gateway_forever_edge_81():
    svc = service(MANAGED)
    conds = conds_for(svc)
    pools.evaluate_pools(conds, svc, [], v1_pool=v1_pool(CURRENT_ACCEPTED), v1alpha2_pool=v1alpha2_pool())
    assert row(conds) == (
        "False",
        "WaitingForGateway",
        "Inference Pool test-ns/svc-inference-pool exists but no Gateway controller has accepted it yet",
    )


def test_stale_rejected_parent_of_a_former_gateway_keeps_pool_ready_edge_73():
    stale = parent(
        "data-science-gateway",
        "openshift-ingress",
        accepted("False", "HTTPRouteNotAccepted"),
        group="networking.istio.io",
    )
    svc = service(MANAGED)
    conds = conds_for(svc)
    pools.evaluate_managed_pools(conds, svc, v1_pool(CURRENT_ACCEPTED, stale), v1alpha2_pool(), [CURRENT])
    assert row(conds) == ("True", "", "")


# --- R-POOL-9 (edge case 42) -----------------------------------------------------------------------


def test_r_pool_9_scheduler_status_is_not_created_without_routing_status_edge_42():
    svc = service(MANAGED, routed=False)
    pools.set_scheduler_status(svc, "p", "s")
    assert svc.status.router is None


def test_r_pool_9_scheduler_status_sets_pool_and_service_names_edge_42():
    svc = service(MANAGED)
    pools.set_scheduler_status(svc, "p", "s")
    assert svc.status.to_wire()["router"] == {
        "gateways": [],
        "scheduler": {
            "inferencePool": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "p"},
            "service": {"group": "", "kind": "Service", "name": "s"},
        },
    }


def test_evaluators_do_not_mutate_the_pools():
    pool = v1_pool(CURRENT_REJECTED)
    before = pool.model_dump()
    svc = service(MANAGED)
    pools.evaluate_managed_pools(conds_for(svc), svc, pool, None, [CURRENT])
    assert pool.model_dump() == before
