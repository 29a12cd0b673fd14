"""What workflow histories keep: planted secrets must never reach them, and no event may be large.

A marker is planted where secrets live next to what a pass reads: an env value in the service's pod
template and in its scheduler template, a ``kubectl.kubernetes.io/last-applied-configuration``
annotation, and an extra key of KServe's ``inferenceservice-config`` ConfigMap (the router reads only
``ingress``). After the services converged and changed once more, every history event of their
workflows is searched for the marker, and the largest event is measured (an event holds its payloads,
so it bounds them from above).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time

from temporalio.client import Client

from benchmarks.chaos.context import Context
from benchmarks.chaos.fleet import SYSTEM, service
from benchmarks.chaos.report import Result
from benchmarks.chaos.scenarios_faults import check_ownership, names

BOUND = 128 * 1024  # bytes: the largest history event allowed
INGRESS = json.dumps(
    {"kserveIngressGateway": f"{SYSTEM}/kserve-ingress-gateway", "ingressGateway": f"{SYSTEM}/gw"}
)


def _with_secrets(name: str, namespace: str, marker: str) -> dict[str, object]:
    body = service(name, namespace)
    env = [{"name": "API_TOKEN", "value": marker}]
    body["spec"]["template"] = {"containers": [{"name": "main", "env": env}]}
    body["spec"]["router"]["scheduler"] = {"template": {"containers": [{"name": "main", "env": env}]}}
    applied = json.dumps({"spec": {"template": {"containers": [{"env": env}]}}})
    body["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": applied}
    return body


async def _scan(address: str, ids: list[str], marker: bytes) -> tuple[int, int, int]:
    """(events holding the marker, the largest event's size, events naming their own service: the proof
    that the scan sees inside the payloads)."""
    client = await Client.connect(address, namespace="default")
    hits = largest = named = 0
    for workflow_id in ids:
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        own_name = workflow_id.rsplit("/", 1)[1].encode()
        for event in history.events:
            data = event.SerializeToString()
            hits += marker in data
            named += own_name in data
            largest = max(largest, len(data))
    return hits, largest, named


def history_secrets(ctx: Context) -> Result:
    result = Result("history_secrets", "planted secrets (env, annotation, ConfigMap key) stay out of history")
    marker = f"chaos-secret-{secrets.token_hex(8)}"
    with ctx.stack("history-secrets") as stack:
        fleet = stack.fleet
        config = {"ingress": INGRESS, "database-password": marker}
        existing = fleet.kube.get("ConfigMap", SYSTEM, "inferenceservice-config")
        if existing is None:
            meta = {"name": "inferenceservice-config", "namespace": SYSTEM}
            fleet.kube.create(
                "ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": config}
            )
        else:
            fleet.kube.patch("ConfigMap", SYSTEM, "inferenceservice-config", {"data": config})
        chosen = names("svc", min(ctx.scale.services, 10))
        fleet.names += chosen
        for name in chosen:
            fleet.kube.create("LLMInferenceService", _with_secrets(name, fleet.namespace, marker))
        first = fleet.wait_converged(timeout=ctx.scale.timeout)
        fleet.bump(tag="again")  # a second pass, with a plan of changes, per service
        again = fleet.wait_converged(timeout=ctx.scale.recovery_timeout)
        time.sleep(1.0)
        ids = [f"llmisvc/{fleet.namespace}/{n}" for n in chosen]
        hits, largest, named = asyncio.run(_scan(stack.temporal.address, ids, marker.encode()))
        result.measured.update(
            converged_seconds=first,
            converged_again_seconds=again,
            events_naming_their_service=named,
            largest_event_bytes=largest,
        )
        result.check("the scan reads the payloads (events naming their service)", named, "> 0", named > 0)
        result.check(
            "services converged",
            first is not None and again is not None,
            "True",
            first is not None and again is not None,
        )
        result.check("history events holding a planted secret", hits, "0", hits == 0)
        result.check(
            "largest history event (KiB)", round(largest / 1024, 1), f"≤ {BOUND // 1024}", largest <= BOUND
        )
        check_ownership(result, stack)
    return result
