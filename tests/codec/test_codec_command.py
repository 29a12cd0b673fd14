"""``llmisvc-router codec-server`` as a person runs it, and the codec setting of the commands that talk to
Temporal: a keys file that cannot be used is a one-line error with exit status 2."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads

from llmisvc_router.cli import main
from llmisvc_runtime import codec, exit_codes, temporal
from llmisvc_runtime.codec import CodecKeys, EncryptionCodec
from llmisvc_runtime.errors import StartupError
from tests.cli.test_command_line import ROOT, environment, free_port, one_line
from tests.codec.test_codec import post


def keys_file(tmp_path: Path) -> tuple[Path, CodecKeys]:
    key = codec.new_key()
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"current": "k1", "keys": {"k1": key}}))
    return path, CodecKeys(current="k1", keys={"k1": base64.b64decode(key)})


def test_the_codec_server_command_decodes_what_the_worker_encrypted(tmp_path):
    path, keys = keys_file(tmp_path)
    sealed = EncryptionCodec(keys).encrypt(Payload(metadata={"encoding": b"json/plain"}, data=b'"hello"'))
    env = environment(**{codec.KEYS_FILE_VARIABLE: str(path)})
    server = subprocess.Popen(
        [sys.executable, "-m", "llmisvc_router", "codec-server", "--port", str(free_port())],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        banner = server.stdout.readline()
        assert banner.startswith("codec server at http://127.0.0.1:"), banner
        url = banner.split()[3]
        body = json_format.MessageToJson(Payloads(payloads=[sealed])).encode()
        status, headers, answer = post(f"{url}/decode", body, origin="http://localhost:8233")
    finally:
        server.terminate()
        server.wait(10)
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "http://localhost:8233"
    assert json_format.Parse(answer, Payloads()).payloads[0].data == b'"hello"'


def test_the_codec_server_without_keys_says_what_to_set(monkeypatch, capsys):
    monkeypatch.delenv(codec.KEYS_FILE_VARIABLE, raising=False)
    assert main(["codec-server"]) == exit_codes.USAGE
    assert one_line(capsys.readouterr().err) == (
        "llmisvc-router codec-server: no keys: set LLMISVC_ROUTER_CODEC_KEYS_FILE or pass --keys-file"
    )


def test_the_codec_server_on_a_busy_port_exits_4(tmp_path, capsys):
    path, _ = keys_file(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["codec-server", "--keys-file", str(path), "--port", str(port)])
    assert code == exit_codes.UNAVAILABLE
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"llmisvc-router codec-server: cannot listen on 127.0.0.1:{port}")


async def test_a_command_with_an_unusable_keys_file_is_refused_with_2_naming_it(tmp_path):
    missing = tmp_path / "keys.json"
    with pytest.raises(StartupError) as refused:
        await temporal.connect({codec.KEYS_FILE_VARIABLE: str(missing), "TEMPORAL_ADDRESS": "127.0.0.1:1"})
    assert refused.value.code == exit_codes.USAGE
    assert str(refused.value) == f"LLMISVC_ROUTER_CODEC_KEYS_FILE {missing}: No such file or directory"
