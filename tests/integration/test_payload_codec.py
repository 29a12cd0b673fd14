"""The payload codec on the dev server (issue 13, part 4): with ``LLMISVC_ROUTER_CODEC_KEYS_FILE`` set
(connected as the worker, the watcher and the commands connect), a service's workflow, started and
signalled by the watcher, runs as usual; its history holds only encrypted payloads (read raw, by a client
without the codec); the codec server decrypts them over HTTP as the Temporal UI asks it to, and
Temporal's own CLI reads the history through it."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from llmisvc_runtime import codec, codec_server
from llmisvc_runtime.codec import CodecKeys, EncryptionCodec
from llmisvc_runtime.temporal import connect_temporal
from tests.codec.test_codec import post
from tests.history import recorded_payloads
from tests.integration.harness import running_stack, until

TEMPORAL = Path(sys.executable).parent / "temporal"


async def temporal_cli(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(TEMPORAL), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def _signalled(temporal: Client, workflow_id: str) -> bool:
    history = await temporal.get_workflow_handle(workflow_id).fetch_history()
    return any(e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED for e in history.events)


pytestmark = pytest.mark.asyncio(loop_scope="session")

#: Payloads the codec leaves as they are: Temporal indexes search attributes, so they stay readable; a
#: local activity's marker keeps the SDK's own record of it readable (sequence, attempt, activity type,
#: times) next to its encrypted result.
UNENCODED = ("search_attributes", "marker_recorded_event_attributes.details[data]")


async def test_with_the_codec_history_payloads_are_encrypted_and_the_codec_server_decodes_them(
    temporal, cluster, tmp_path
):
    key = codec.new_key()
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps({"current": "k1", "keys": {"k1": key}}))
    encryption = EncryptionCodec(CodecKeys(current="k1", keys={"k1": base64.b64decode(key)}))
    address = temporal.service_client.config.target_host
    # As the worker, the watcher and the commands connect: the setting turns the codec on.
    encrypted_client = await connect_temporal(
        {"TEMPORAL_ADDRESS": address, codec.KEYS_FILE_VARIABLE: str(keys_file)}
    )
    async with running_stack(encrypted_client, cluster, watcher=True) as stack:
        await stack.create_service("opt")  # the watcher starts its workflow and signals it
        handle = stack.handle("opt")

        async def routed() -> bool:
            return await stack.get(HTTPROUTE, naming.route_name("opt")) is not None

        await until(routed, "the watcher-started workflow to create the managed route")
        await stack.patch(LLMISVC, "opt", {"spec": {"model": {"name": "facebook/opt-350m"}}})  # a signal
        await until(lambda: _signalled(temporal, handle.id), "the watcher's signal in the history")
        state = await stack.state(handle)  # the query's answer, decrypted by the codec client
        assert state.pass_count >= 1 and state.uid is not None, state

        raw = await recorded_payloads(temporal.get_workflow_handle(handle.id))  # no codec here
        route = naming.route_name("opt").encode()
        readable = [
            p
            for p in raw
            if not any(part in p.path for part in UNENCODED)
            and p.payload.metadata["encoding"] != b"binary/encrypted"
        ]
        assert [(p.event_type, p.path, p.payload.data[:300]) for p in readable] == []
        assert not any(route in p.payload.SerializeToString() for p in raw)

        (plan,) = [p for p in raw if p.event_type == "EVENT_TYPE_MARKER_RECORDED" and "result" in p.path][:1]
        with codec_server.serving(codec_server.bind(encryption, "127.0.0.1", 0, ["*"])) as url:
            body = json_format.MessageToJson(Payloads(payloads=[plan.payload])).encode()
            status, _, answer = post(f"{url}/decode", body, origin="http://localhost:8233")
            shown = await temporal_cli("workflow", "show", "-w", handle.id, "--output", "json",
                                       "--address", address,
                                       "--codec-endpoint", url)  # fmt: skip
        # Temporal's own CLI reads the history through the codec server: the writes, decrypted.
        inputs = [
            base64.b64decode(payload["data"])
            for event in json.loads(shown)["events"]
            for payload in event.get("activityTaskScheduledEventAttributes", {})
            .get("input", {})
            .get("payloads", [])
        ]
        assert any(route in data for data in inputs), inputs
        assert status == 200
        (decoded,) = json_format.Parse(answer, Payloads()).payloads
        assert decoded.metadata["encoding"] == b"json/plain" and route in decoded.data
