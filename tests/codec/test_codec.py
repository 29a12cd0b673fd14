"""The payload encryption codec (``llmisvc_runtime.codec``): AES-256-GCM, keys named by id so that rotation
works, a keys file that is refused with one line naming what is wrong, and the codec server's HTTP endpoints
(``llmisvc_runtime.codec_server``) as the Temporal UI calls them."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.failure.v1 import Failure
from temporalio.exceptions import ApplicationError

from activities.models import FetchInput, ServiceKey
from llmisvc_runtime import codec, codec_server
from llmisvc_runtime.codec import CodecError, CodecKeys, CodecKeysError, EncryptionCodec

OLD, NEW = base64.b64decode(codec.new_key()), base64.b64decode(codec.new_key())
SECRET = b"s3cr3t-value"


def keys(current: str, **named: bytes) -> CodecKeys:
    return CodecKeys(current=current, keys=named)


def plain(data: bytes = b'{"value":"' + SECRET + b'"}') -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=data)


async def test_a_payload_round_trips_and_its_data_is_not_readable_encrypted():
    encryption = EncryptionCodec(keys("k1", k1=OLD))
    [sealed] = await encryption.encode([plain()])
    assert (
        sealed.metadata["encoding"] == b"binary/encrypted" and sealed.metadata["encryption-key-id"] == b"k1"
    )
    assert SECRET not in sealed.SerializeToString()
    assert await encryption.decode([sealed]) == [plain()]


async def test_the_same_payload_encrypts_differently_each_time():
    encryption = EncryptionCodec(keys("k1", k1=OLD))
    first, second = await encryption.encode([plain(), plain()])
    assert first.data != second.data


async def test_after_rotation_new_payloads_use_the_current_key_and_old_ones_still_decrypt():
    [old_payload] = await EncryptionCodec(keys("k1", k1=OLD)).encode([plain(b"1")])
    rotated = EncryptionCodec(keys("k2", k1=OLD, k2=NEW))
    [new_payload] = await rotated.encode([plain(b"2")])

    assert new_payload.metadata["encryption-key-id"] == b"k2"
    assert await rotated.decode([old_payload, new_payload]) == [plain(b"1"), plain(b"2")]
    with pytest.raises(CodecError, match="encrypted with key 'k1', which is not in the keys file"):
        await EncryptionCodec(keys("k2", k2=NEW)).decode([old_payload])  # k1 retired too early


async def test_a_payload_passed_off_under_another_key_id_or_altered_does_not_decrypt():
    both = EncryptionCodec(keys("k1", k1=OLD, k2=OLD))  # the same key under two ids
    [sealed] = await both.encode([plain()])
    relabelled = Payload(metadata={**sealed.metadata, "encryption-key-id": b"k2"}, data=sealed.data)
    altered = Payload(metadata=sealed.metadata, data=sealed.data[:-1] + bytes([sealed.data[-1] ^ 1]))
    for payload in (relabelled, altered):
        with pytest.raises(CodecError, match="does not decrypt"):
            await both.decode([payload])


async def test_payloads_written_before_the_codec_was_turned_on_are_read_as_they_are():
    assert await EncryptionCodec(keys("k1", k1=OLD)).decode([plain()]) == [plain()]


async def test_the_data_converter_encrypts_activity_inputs_and_reads_them_back():
    converter = codec.data_converter(EncryptionCodec(keys("k1", k1=OLD)))
    request = FetchInput(key=ServiceKey(namespace="llm", name="opt"), now="2026-12-01T00:00:00Z")
    [encoded] = await converter.encode([request])
    assert encoded.metadata["encoding"] == b"binary/encrypted" and b"opt" not in encoded.data
    assert await converter.decode([encoded], [FetchInput]) == [request]


async def test_with_the_codec_a_failure_message_travels_encrypted_and_reads_back():
    converter = codec.data_converter(EncryptionCodec(keys("k1", k1=OLD)))
    failure = Failure()
    await converter.encode_failure(ApplicationError(f"HTTP 422: {SECRET.decode()}", type="Rejected"), failure)
    assert failure.message == "Encoded failure" and SECRET not in failure.SerializeToString()
    decoded = await converter.decode_failure(failure)
    assert isinstance(decoded, ApplicationError) and decoded.message == f"HTTP 422: {SECRET.decode()}"


def write_keys(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "keys.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


def test_the_keys_file_names_the_current_key_and_every_known_one(tmp_path):
    path = write_keys(tmp_path, {"current": "2026-12", "keys": {"2026-11": b64(OLD), "2026-12": b64(NEW)}})
    found = codec.codec_from_env({codec.KEYS_FILE_VARIABLE: str(path)})
    assert found is not None and found.keys == keys("2026-12", **{"2026-11": OLD, "2026-12": NEW})
    assert codec.codec_from_env({}) is None


@pytest.mark.parametrize(
    ("document", "error"),
    [
        ("{", "not JSON"),
        ({"keys": {"a": b64(OLD)}}, "current: None is not one of the keys (a)"),
        ({"current": "a", "keys": {"a": "not base64!"}}, "keys.a: not base64"),
        ({"current": "a", "keys": {"a": b64(b"short")}}, "keys.a: 5 bytes, AES-256 needs 32"),
        ([1, 2], 'expected {"current": KEY_ID, "keys": {KEY_ID: BASE64, ...}}'),
    ],
    ids=["not-json", "no-current", "not-base64", "short-key", "not-an-object"],
)
def test_a_keys_file_that_cannot_be_used_is_refused_naming_the_file_and_the_field(tmp_path, document, error):
    path = write_keys(tmp_path, document)
    with pytest.raises(CodecKeysError) as refused:
        CodecKeys.load(path)
    assert str(refused.value).startswith(f"{codec.KEYS_FILE_VARIABLE} {path}: {error}"), refused.value


def test_a_missing_keys_file_is_refused_naming_it(tmp_path):
    with pytest.raises(CodecKeysError, match=r"keys.json: No such file or directory$"):
        CodecKeys.load(tmp_path / "keys.json")


# --- the codec server ------------------------------------------------------------------------------------


def post(url: str, body: bytes, origin: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "application/json", "X-Namespace": "default"}
    if origin:
        headers["Origin"] = origin
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def as_json(*payloads: Payload) -> bytes:
    return json_format.MessageToJson(Payloads(payloads=list(payloads))).encode()


def from_json(body: bytes) -> list[Payload]:
    return list(json_format.Parse(body, Payloads()).payloads)


def test_the_codec_server_encodes_and_decodes_payloads_over_http_for_the_ui():
    encryption = EncryptionCodec(keys("k1", k1=OLD))
    with codec_server.serving(codec_server.bind(encryption, "127.0.0.1", 0, ["http://ui.example"])) as url:
        status, headers, body = post(f"{url}/encode", as_json(plain()), origin="http://ui.example")
        assert status == 200 and headers["Access-Control-Allow-Origin"] == "http://ui.example"
        [sealed] = from_json(body)
        assert sealed.metadata["encryption-key-id"] == b"k1" and SECRET not in sealed.data

        status, _, body = post(f"{url}/default/decode", as_json(sealed, plain(b"7")))  # a prefix is fine
        assert status == 200 and from_json(body) == [plain(), plain(b"7")]


def test_the_codec_server_answers_the_uis_preflight_only_for_its_origins():
    encryption = EncryptionCodec(keys("k1", k1=OLD))
    with codec_server.serving(codec_server.bind(encryption, "127.0.0.1", 0, ["http://ui.example"])) as url:
        preflight = urllib.request.Request(
            f"{url}/decode",
            method="OPTIONS",
            headers={"Origin": "http://ui.example", "Access-Control-Request-Method": "POST"},
        )
        with urllib.request.urlopen(preflight, timeout=10) as answer:
            assert answer.status == 204
            assert "X-Namespace" in answer.headers["Access-Control-Allow-Headers"]
            assert "POST" in answer.headers["Access-Control-Allow-Methods"]
        _, headers, _ = post(f"{url}/decode", as_json(plain()), origin="http://elsewhere.example")
        assert "Access-Control-Allow-Origin" not in headers


def test_the_codec_server_refuses_what_it_cannot_decode_with_a_400_saying_why():
    sealed = EncryptionCodec(keys("k9", k9=NEW)).encrypt(plain())
    encryption = EncryptionCodec(keys("k1", k1=OLD))
    with codec_server.serving(codec_server.bind(encryption, "127.0.0.1", 0, ["*"])) as url:
        status, _, body = post(f"{url}/decode", as_json(sealed))
        assert status == 400 and b"key 'k9', which is not in the keys file" in body
        status, _, body = post(f"{url}/decode", b"{not json")
        assert status == 400
        status, _, _ = post(f"{url}/elsewhere", as_json(plain()))
        assert status == 404
