"""Reference validation (spec 3.2): R-VAL-1..7 and the related edge cases 66, 67, 80."""

from __future__ import annotations

import pytest

from llmisvc_core.checks.references import InvalidReferences, validate_references
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.snapshot import PassWorld
from tests import builders as b
from tests.builders import Wire, plans


def _validate(svc: Wire, *objects: Wire) -> InvalidReferences | None:
    world = PassWorld(plans.snapshot(svc, *objects))
    return validate_references(world, LLMInferenceService.model_validate(svc))


def _router(**parts: object) -> Wire:
    return dict(parts)


CASES = [
    pytest.param(
        _router(gateway={"refs": [{"name": "missing-a"}, {"name": "missing-b", "namespace": "other"}]}),
        [],
        ("GatewaysReady", "Gateway ns/missing-a does not exist; Gateway other/missing-b does not exist"),
        id="r_val_1_every_missing_gateway_ref_is_listed_empty_namespace_means_service_namespace",
    ),
    pytest.param(
        _router(
            gateway={"refs": [{"name": "gw"}]}, route={"http": {"refs": [{"name": "r1"}, {"name": "r2"}]}}
        ),
        [b.gateway()],
        ("HTTPRoutesReady", "HTTPRoute ns/r1 does not exist; HTTPRoute ns/r2 does not exist"),
        id="r_val_3_missing_route_refs",
    ),
    pytest.param(
        _router(
            route={"http": {"spec": {"parentRefs": [{"name": "nope"}, {"name": "gw", "namespace": "x"}]}}}
        ),
        [b.gateway("gw", "x")],
        ("HTTPRoutesReady", "Managed HTTPRoute references non-existent Gateway ns/nope"),
        id="r_val_5_managed_route_parent_gateway_missing",
    ),
    pytest.param(
        _router(route={"http": {"refs": [{"name": "r1"}, {"name": "r2"}]}}),
        [b.http_route("r1", parents=[]), b.http_route("r2", parents=[("ns", "gone")])],
        (
            "HTTPRoutesReady",
            "HTTPRoute target validation failed: HTTPRoute ns/r1 has no parent gateway references; "
            "HTTPRoute ns/r2 references non-existent Gateway ns/gone",
        ),
        id="r_val_6_referenced_route_targets",
    ),
    pytest.param(
        _router(gateway={"refs": [{"name": "gone"}]}, route={"http": {"refs": [{"name": "missing-route"}]}}),
        [],
        ("GatewaysReady", "Gateway ns/gone does not exist"),
        id="r_val_order_gateway_refs_are_checked_first",
    ),
]


@pytest.mark.parametrize(("router", "objects", "expected"), CASES)
def test_r_val_reference_checks(router: Wire, objects: list[Wire], expected: tuple[str, str]) -> None:
    invalid = _validate(b.service(router=router), *objects)
    assert invalid == InvalidReferences(*expected)


def test_r_val_all_references_present_passes() -> None:
    router = _router(
        gateway={"refs": [{"name": "gw"}]},
        route={"http": {"refs": [{"name": "r1"}]}},
    )
    assert (
        _validate(b.service(router=router), b.gateway(), b.http_route("r1", parents=[("ns", "gw")])) is None
    )


def test_r_val_7_the_pass_reports_refs_invalid_in_the_condition_and_rollup() -> None:
    svc = b.service(
        router={
            "gateway": {"refs": [{"name": "non-existent-gateway"}]},
            "route": {"http": {"refs": [{"name": "r"}]}},
        }
    )
    plan = plans.run(svc)
    assert plan.outcome == "invalid-references"
    assert plan.apply == [] and plan.delete == []
    gateways = plans.condition(plan, "GatewaysReady")
    router = plans.condition(plan, "RouterReady")
    assert gateways is not None and router is not None
    assert (gateways["status"], gateways["reason"]) == ("False", "RefsInvalid")
    assert gateways["message"] == "Gateway ns/non-existent-gateway does not exist"
    assert (router["status"], router["reason"], router["message"]) == (
        "False",
        "RefsInvalid",
        gateways["message"],
    )


def test_r_val_2_gateway_refs_invalid_clears_once_the_gateway_exists() -> None:
    svc = b.service(
        router={"gateway": {"refs": [{"name": "gw"}]}, "route": {"http": {"refs": [{"name": "r"}]}}}
    )
    first = plans.run(svc)
    svc["status"] = first.status
    second = plans.run(svc, b.gateway(), b.gateway_class(), b.http_route("r", parents=[("ns", "gw")]))
    gateways = plans.condition(second, "GatewaysReady")
    assert gateways is None or gateways.get("reason") != "RefsInvalid"
