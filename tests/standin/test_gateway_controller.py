"""The simulated gateway controller: status of Gateways, HTTPRoutes and InferencePools, through the API."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from apiserver_standin.server import StandinApiServer
from apiserver_standin.testing import running_apiserver, running_gateway_controller
from llmisvc_devstack.controllers.gateway import SimulatedGatewayController
from llmisvc_devstack.controllers.gateway_status import ControllerConfig, route_parents
from tests.builders import inference_pool

from .helpers import GATEWAY, eventually, gateway, route

V1 = "inference.networking.k8s.io"
V1ALPHA2 = "inference.networking.x-k8s.io"
AGENT = "standin-gateway-controller"


@pytest.fixture
def controller(standin: StandinApiServer) -> Iterator[SimulatedGatewayController]:
    with running_gateway_controller(standin, accepted_pool_groups=frozenset({V1})) as ctl:
        assert ctl.wait_synced()
        yield ctl


def conditions(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in entry.get("conditions") or []}


def status_of(custom: Any, plural: str, name: str, group: tuple[str, str] = GATEWAY) -> dict[str, Any]:
    return dict(custom.get_namespaced_custom_object(*group, "default", plural, name).get("status") or {})


def controlled_gateway_status(custom: Any, name: str) -> dict[str, Any]:
    """The Gateway's status once a controller wrote it: the CRD's default is "Pending" conditions."""
    status = status_of(custom, "gateways", name)
    pending = any(c.get("reason") == "Pending" for c in status.get("conditions") or [])
    return {} if pending else status


def test_gateways_are_marked_accepted_and_programmed_with_addresses(controller, custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("gw"))
    status = eventually(lambda: controlled_gateway_status(custom, "gw"))
    assert conditions(status)["Programmed"]["status"] == "True"
    assert conditions(status)["Accepted"]["status"] == "True"
    assert conditions(status)["Programmed"]["observedGeneration"] == 1
    assert status["addresses"] == [{"type": "IPAddress", "value": "203.0.113.10"}]


def test_route_parents_copy_each_parent_ref_with_accepted_and_resolved_refs(controller, custom):
    body = route("r")
    body["spec"]["parentRefs"].append({"name": "gw2", "namespace": "other", "sectionName": "http"})
    stored = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", body)
    parents = eventually(lambda: status_of(custom, "httproutes", "r").get("parents"))
    assert [p["parentRef"] for p in parents] == stored["spec"]["parentRefs"]  # with the CRD's defaults
    for parent in parents:
        assert parent["controllerName"] == controller.config.controller_name
        assert {t: c["status"] for t, c in conditions(parent).items()} == {
            "Accepted": "True",
            "ResolvedRefs": "True",
        }
        assert all(c["observedGeneration"] == 1 for c in parent["conditions"])
    custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"spec": {"hostnames": ["h"]}}
    )
    eventually(
        lambda: (
            conditions(status_of(custom, "httproutes", "r")["parents"][0])["Accepted"]["observedGeneration"]
            == 2
        )
    )


def test_a_backend_pool_group_the_gateway_does_not_accept_is_invalid_kind(controller, custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r", pool_group=V1ALPHA2))
    parents = eventually(lambda: status_of(custom, "httproutes", "r").get("parents"))
    resolved = conditions(parents[0])["ResolvedRefs"]
    assert (resolved["status"], resolved["reason"]) == ("False", "InvalidKind")
    assert resolved["message"] == f"Group is invalid: {V1ALPHA2}"
    assert conditions(parents[0])["Accepted"]["status"] == "True"


def test_pools_get_a_parent_per_gateway_whose_routes_use_them(standin, custom):
    with running_gateway_controller(standin) as ctl:  # both pool groups accepted
        ctl.wait_synced()
        custom.create_namespaced_custom_object(V1, "v1", "default", "inferencepools", inference_pool("pool"))
        custom.create_namespaced_custom_object(
            V1ALPHA2, "v1alpha2", "default", "inferencepools", inference_pool("pool", f"{V1ALPHA2}/v1alpha2")
        )
        custom.create_namespaced_custom_object(
            *GATEWAY, "default", "httproutes", route("a", gateway="gw-a", pool_group=V1)
        )
        custom.create_namespaced_custom_object(
            *GATEWAY, "default", "httproutes", route("b", gateway="gw-b", pool_group=V1)
        )
        custom.create_namespaced_custom_object(
            *GATEWAY, "default", "httproutes", route("c", gateway="gw-c", pool_group=V1ALPHA2)
        )
        v1 = eventually(
            lambda: (
                len(p := status_of(custom, "inferencepools", "pool", (V1, "v1")).get("parents") or []) == 2
                and p
            )
        )
        assert [p["parentRef"] for p in v1] == [
            {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw-a", "namespace": "default"},
            {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw-b", "namespace": "default"},
        ]
        assert all(conditions(p)["Accepted"]["status"] == "True" for p in v1)
        # The v1alpha2 CRD defaults status.parent to a placeholder ("default", Pending) until a
        # controller writes: wait for the Gateway's entry.
        alpha = eventually(
            lambda: [
                p
                for p in status_of(custom, "inferencepools", "pool", (V1ALPHA2, "v1alpha2")).get("parent")
                or []
                if p["parentRef"].get("kind") == "Gateway"
            ]
        )
        assert [p["parentRef"]["name"] for p in alpha] == ["gw-c"]
        assert "parents" not in status_of(custom, "inferencepools", "pool", (V1ALPHA2, "v1alpha2"))
        custom.delete_namespaced_custom_object(*GATEWAY, "default", "httproutes", "b")
        eventually(
            lambda: len(status_of(custom, "inferencepools", "pool", (V1, "v1")).get("parents") or []) == 1
        )


def test_rejection_can_be_configured_for_routes_and_gateways(controller, custom):
    controller.configure(reject_routes=True, reject_gateways=frozenset({"default/gw"}))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("gw"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    gw = eventually(lambda: controlled_gateway_status(custom, "gw"))
    assert conditions(gw)["Programmed"]["status"] == "False" and "addresses" not in gw
    parents = eventually(lambda: status_of(custom, "httproutes", "r").get("parents"))
    accepted = conditions(parents[0])["Accepted"]
    assert (accepted["status"], accepted["reason"]) == ("False", "NotAccepted")
    controller.configure(reject_routes=False)
    eventually(
        lambda: conditions(status_of(custom, "httproutes", "r")["parents"][0])["Accepted"]["status"] == "True"
    )


def test_lag_delays_status_writes(standin, custom):
    with running_gateway_controller(standin, lag_seconds=0.5) as ctl:
        ctl.wait_synced()
        time.sleep(1.2)  # let the (at most two) start-up passes go by
        custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("gw"))
        started = time.monotonic()
        time.sleep(0.3)
        assert controlled_gateway_status(custom, "gw") == {}
        eventually(lambda: controlled_gateway_status(custom, "gw"))
        assert time.monotonic() - started >= 0.45


def test_status_is_written_only_when_it_would_change(controller, standin, custom, core):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("gw"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    eventually(
        lambda: (
            status_of(custom, "httproutes", "r").get("parents") and controlled_gateway_status(custom, "gw")
        )
    )
    time.sleep(0.3)
    writes = controller.writes
    standin.counter.reset()
    custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"metadata": {"labels": {"x": "y"}}}
    )
    core.create_namespaced_config_map("default", {"metadata": {"name": "noise"}})
    time.sleep(0.5)
    assert controller.writes == writes
    assert standin.counter.records(user_agent=AGENT, verb="patch") == []
    assert standin.counter.writes(user_agent=AGENT) == 0
    assert standin.counter.writes(exclude_user_agent=AGENT) == 2  # the test's own patch and create
    assert controller.reconcile_once() == 0


def test_missing_crds_are_tolerated_and_picked_up_once_installed():
    with running_apiserver(crds="llmisvc") as server, running_gateway_controller(server) as ctl:
        assert ctl.wait_synced()
        server.install_crds("gateway-api")
        from kubernetes import client

        custom = client.CustomObjectsApi(server.client)
        custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("gw"))
        eventually(lambda: status_of(custom, "gateways", "gw"), timeout=8)


def test_other_controllers_route_parents_are_kept():
    other = {"parentRef": {"name": "gw"}, "controllerName": "someone.else/x", "conditions": []}
    body = {
        **route("r"),
        "metadata": {"name": "r", "namespace": "default", "generation": 3},
        "status": {"parents": [other]},
    }
    parents = route_parents(body, ControllerConfig())
    assert parents[0] == other and parents[1]["controllerName"] == ControllerConfig().controller_name
    assert conditions(parents[1])["Accepted"]["observedGeneration"] == 3
    again = route_parents({**body, "status": {"parents": parents}}, ControllerConfig())
    assert again == parents  # same world, same status (transition times kept): nothing to write


def test_a_malformed_object_in_the_controllers_cache_does_not_stop_the_others_from_being_served(
    controller, custom
):
    # What a real API server would never hand out, seen anyway (the controller must survive it): a route
    # whose parentRefs is not a list and whose rules are not objects.
    malformed = route("malformed")
    malformed["metadata"] |= {"namespace": "default", "resourceVersion": "1"}
    malformed["spec"] = {"parentRefs": "gw", "rules": ["not an object"]}
    controller.informers["httproutes"].put(malformed)
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("good"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("gw"))
    assert eventually(lambda: status_of(custom, "httproutes", "good").get("parents"))
    assert eventually(lambda: controlled_gateway_status(custom, "gw"))
    assert controller._thread.is_alive()
