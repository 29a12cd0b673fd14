"""The payload codec on the dev server (issue 13, part 4): with ``worker.codec`` on, a service's workflow
runs as usual, its history holds only encrypted payloads (read raw, by a client without the codec), and
the codec server decrypts them over HTTP as the Temporal UI asks it to."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads
from temporalio.client import Client

from tests.codec.test_codec import post
from tests.history import recorded_payloads
from tests.integration import world
from tests.integration.harness import running_stack
from worker import codec, codec_server
from worker.codec import CodecKeys, EncryptionCodec

TEMPORAL = Path(sys.executable).parent / "temporal"


async def temporal_cli(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(TEMPORAL), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return out.decode()


pytestmark = pytest.mark.asyncio(loop_scope="session")

#: Payloads the codec leaves as they are: Temporal indexes search attributes, so they stay readable; a
#: local activity's marker keeps the SDK's own record of it readable (sequence, attempt, activity type,
#: times) next to its encrypted result.
UNENCODED = ("search_attributes", "marker_recorded_event_attributes.details[data]")


async def test_with_the_codec_history_payloads_are_encrypted_and_the_codec_server_decodes_them(temporal):
    encryption = EncryptionCodec(CodecKeys(current="k1", keys={"k1": base64.b64decode(codec.new_key())}))
    config = temporal.config()
    config["data_converter"] = codec.data_converter(encryption)
    encrypted_client = Client(**config)
    async with running_stack(encrypted_client) as stack:
        await stack.create_service("opt")
        handle = await stack.start_workflow("opt")
        state = await stack.passes(handle, 1)  # the query's answer, decrypted by the codec client
        assert state.last is not None and state.last.writes == 4, state.last

        raw = await recorded_payloads(temporal.get_workflow_handle(handle.id))  # no codec here
        route = world.route_name("opt").encode()
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
                                       "--address", config["service_client"].config.target_host,
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
