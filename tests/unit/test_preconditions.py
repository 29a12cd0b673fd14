"""Preconditions (spec 3.1 with decision P2): the API kinds a service needs must be served."""

from __future__ import annotations

import pytest

from llmisvc_core.checks.preconditions import missing_requirements
from llmisvc_core.models import kube
from llmisvc_core.models.kube import GATEWAY, GATEWAYCLASS, HTTPROUTE, POOL_V1, POOL_V1ALPHA2, ResourceType
from llmisvc_core.models.llmisvc import LLMInferenceService
from tests import builders as b
from tests.builders import Wire, plans

ALL = frozenset(kube.KNOWN_TYPES.values())
MANAGED_SCHEDULER = {"scheduler": {"template": {"containers": [{"name": "main"}]}}}


def _missing(router: Wire | None, installed: frozenset[ResourceType], stop: bool = False) -> list[str]:
    svc = b.service(router=router)
    if stop:
        b.stopped(svc)
    return missing_requirements(LLMInferenceService.model_validate(svc), installed)


@pytest.mark.parametrize(
    ("router", "installed", "expected"),
    [
        pytest.param(None, frozenset(), [], id="no_router_needs_nothing"),
        pytest.param(
            {"route": {}},
            ALL - {HTTPROUTE, GATEWAY},
            ["httproutes.gateway.networking.k8s.io/v1", "gateways.gateway.networking.k8s.io/v1"],
            id="route_needs_gateway_api",
        ),
        pytest.param(
            {"gateway": {}},
            ALL - {GATEWAYCLASS},
            ["gatewayclasses.gateway.networking.k8s.io/v1"],
            id="gateway_needs_gateway_api",
        ),
        pytest.param(
            MANAGED_SCHEDULER, ALL - {POOL_V1}, [], id="managed_scheduler_one_pool_version_is_enough"
        ),
        pytest.param(
            MANAGED_SCHEDULER,
            ALL - {POOL_V1, POOL_V1ALPHA2},
            [
                "inferencepools.inference.networking.k8s.io/v1 or "
                "inferencepools.inference.networking.x-k8s.io/v1alpha2"
            ],
            id="managed_scheduler_needs_a_pool_version",
        ),
        pytest.param(
            {"scheduler": {"pool": {"ref": {"name": "p"}}}},
            ALL - {POOL_V1},
            ["inferencepools.inference.networking.k8s.io/v1"],
            id="pool_ref_needs_v1_pool",
        ),
    ],
)
def test_p2_required_kinds(
    router: Wire | None, installed: frozenset[ResourceType], expected: list[str]
) -> None:
    assert _missing(router, installed) == expected


def test_p2_a_stopped_service_needs_no_kinds() -> None:
    assert _missing({"route": {}}, frozenset(), stop=True) == []


def test_p2_missing_crd_is_precondition_not_met_in_http_routes_ready() -> None:
    svc = b.service(router={"route": {}, "gateway": {}})
    plan = plans.run(svc, installed=set(ALL - {HTTPROUTE}))
    assert plan.outcome == "precondition-not-met"
    cond = plans.condition(plan, "HTTPRoutesReady")
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("False", "GatewayPreconditionNotMet")
    assert cond["message"] == (
        "required CRDs are not installed: httproutes.gateway.networking.k8s.io/v1: precondition not met"
    )
    assert plan.apply == [] and plan.delete == []
    router = plans.condition(plan, "RouterReady")
    assert router is not None and router["reason"] == "GatewayPreconditionNotMet"
