"""Per-service isolation, end to end: the watcher and the worker on the control plane, with services the
API server stores but the router cannot read (open-schema fields nested 600 levels, an adapters field of
the wrong type) next to good ones. Each malformed service gets its own ``InvalidSpec`` status; the good
ones converge, and a good service's deleted route is recreated within seconds, not at the next resync."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
import urllib.request
from functools import partial

import pytest
from temporalio.client import Client

from activities.invalid_spec import INVALID_SPEC
from llmisvc_core import naming
from llmisvc_core.limits import MAX_DEPTH
from llmisvc_core.models.kube import HTTPROUTE
from tests.cluster import Cluster
from tests.integration import world
from tests.integration.harness import Stack, conditions_of, running_stack, until
from tests.integration.world import Wire

pytestmark = pytest.mark.asyncio(loop_scope="session")

GOOD = ("good-a", "good-b", "good-c")
#: Seconds a deleted route of a good service may stay missing (issue 13's target: 2 s).
RECREATED_WITHIN = 2.0


def nested(levels: int) -> object:
    value: object = "leaf"
    for level in range(levels):
        value = {"x": value} if level % 2 else [value]
    return value


def malformed(namespace: str) -> dict[str, Wire]:
    deep_config = world.service("deep-config", namespace)
    deep_config["spec"]["router"]["scheduler"] = {"config": {"inline": {"plugins": nested(600)}}}
    deep_adapters = world.service("deep-adapters", namespace)
    deep_adapters["spec"]["model"]["lora"] = {"adapters": [nested(600)]}
    unreadable = world.service("unreadable", namespace)
    unreadable["spec"]["model"]["lora"] = {"adapters": "all of them"}
    return {"deep-config": deep_config, "deep-adapters": deep_adapters, "unreadable": unreadable}


def post(stack: Stack, body: Wire) -> None:
    """Create with a plain HTTPS request as the admin, as kubectl would: the Python client's own
    serializer recurses per level and stops short of 600."""
    cluster, namespace = stack.cluster, body["metadata"]["namespace"]
    url = f"{cluster.url}/apis/serving.kserve.io/v1alpha2/namespaces/{namespace}/llminferenceservices"
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {cluster.plane.token('admin')}"}
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    context = ssl.create_default_context(cafile=str(cluster.control.ca_file))
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        assert response.status == 201


async def invalid_spec_message(stack: Stack, name: str) -> str | None:
    ready = conditions_of(await stack.service(name)).get("RouterReady") or {}
    return str(ready.get("message")) if ready.get("reason") == INVALID_SPEC else None


async def test_with_malformed_services_present_a_good_services_deleted_route_is_recreated_within_2s(
    temporal: Client,
    cluster: Cluster,
) -> None:
    async with running_stack(temporal, cluster, watcher=True) as stack:
        bad = malformed(stack.namespace)
        for name, body in bad.items():
            stack.workflow_ids.add(f"llmisvc/{stack.namespace}/{name}")
            await asyncio.to_thread(post, stack, body)
        for name in GOOD:
            await stack.create_service(name)

        async def routed() -> list[Wire] | None:
            found = [await stack.get(HTTPROUTE, naming.route_name(name)) for name in GOOD]
            return found if all(found) else None  # type: ignore[return-value]

        await until(routed, "the good services' routes")
        for name in ("deep-config", "deep-adapters"):
            message = await until(partial(invalid_spec_message, stack, name), f"{name} InvalidSpec")
            assert f"nested deeper than {MAX_DEPTH} levels" in message, message
            assert "\n" not in message
        assert "spec.model.lora.adapters" in await until(
            lambda: invalid_spec_message(stack, "unreadable"), "unreadable InvalidSpec"
        )

        for name in GOOD:
            await stack.delete(HTTPROUTE, naming.route_name(name))
            deleted = time.monotonic()
            while await stack.get(HTTPROUTE, naming.route_name(name)) is None:
                assert time.monotonic() - deleted < RECREATED_WITHIN, f"the route of {name} is still missing"
                await asyncio.sleep(0.05)
