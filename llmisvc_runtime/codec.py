"""Optional encryption of everything the router puts into Temporal: a ``PayloadCodec`` (AES-256-GCM).

Turned on by ``LLMISVC_ROUTER_CODEC_KEYS_FILE``, a JSON file (a mounted Kubernetes Secret, typically) of
named keys and the name of the current one::

    {"current": "2026-12", "keys": {"2026-11": "<base64 of 32 bytes>", "2026-12": "<base64 of 32 bytes>"}}

Every payload is encrypted with the current key and names it (metadata ``encryption-key-id``); a payload
is decrypted with whichever known key it names, so a key is rotated by adding a new one as current and
removing the old one only when no history that still matters was written with it. Payloads that are not
encrypted (written before the codec was turned on) are read as they are. With the codec, failure
messages and stack traces travel encrypted too (Temporal's encoded failure attributes).

The worker, the watcher and the command line all need the same keys: the workflow reads what the
watcher's signals and the commands' updates carry, and the commands read the workflow's answers. The
Temporal UI shows the payloads through ``llmisvc-router codec-server`` (``llmisvc_runtime.codec_server``).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes, PayloadCodec

from llmisvc_runtime import exit_codes
from llmisvc_runtime.errors import StartupError

KEYS_FILE_VARIABLE = "LLMISVC_ROUTER_CODEC_KEYS_FILE"
ENCODING = b"binary/encrypted"  # the encoding Temporal's samples and tools use for encrypted payloads
KEY_ID = "encryption-key-id"
CIPHER = "encryption-cipher"
CIPHER_NAME = b"AES256-GCM"
KEY_BYTES = 32
NONCE_BYTES = 12


class CodecKeysError(StartupError):
    """The keys file cannot be used; the message names the file and what is wrong (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_codes.USAGE)


class CodecError(Exception):
    """A payload cannot be decrypted (an unknown key id, or data that is not what was encrypted)."""


@dataclasses.dataclass(frozen=True)
class CodecKeys:
    current: str
    keys: Mapping[str, bytes]

    @classmethod
    def load(cls, path: str | Path) -> CodecKeys:
        where = f"{KEYS_FILE_VARIABLE} {path}"
        try:
            document = json.loads(Path(path).read_text())
        except OSError as err:
            raise CodecKeysError(f"{where}: {err.strerror or err}") from err
        except ValueError as err:
            raise CodecKeysError(f"{where}: not JSON ({err})") from err
        if not isinstance(document, dict) or not isinstance(document.get("keys"), dict):
            raise CodecKeysError(f'{where}: expected {{"current": KEY_ID, "keys": {{KEY_ID: BASE64, ...}}}}')
        keys = {str(key_id): _key(where, str(key_id), value) for key_id, value in document["keys"].items()}
        current = document.get("current")
        if current not in keys:
            raise CodecKeysError(f"{where}: current: {current!r} is not one of the keys ({', '.join(keys)})")
        return cls(current=str(current), keys=keys)


def _key(where: str, key_id: str, value: object) -> bytes:
    try:
        raw = base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as err:
        raise CodecKeysError(f"{where}: keys.{key_id}: not base64") from err
    if len(raw) != KEY_BYTES:
        raise CodecKeysError(f"{where}: keys.{key_id}: {len(raw)} bytes, AES-256 needs {KEY_BYTES}")
    return raw


def new_key() -> str:
    """A fresh key, base64, for the keys file (``python -c 'from llmisvc_runtime.codec import new_key;
    ...'``)."""
    return base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()


class EncryptionCodec(PayloadCodec):
    """AES-256-GCM with the key id as associated data, so a payload cannot be passed off under another."""

    def __init__(self, keys: CodecKeys) -> None:
        self.keys = keys
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys.keys.items()}

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(p) for p in payloads]

    def encrypt(self, payload: Payload) -> Payload:
        key_id = self.keys.current
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._ciphers[key_id].encrypt(nonce, payload.SerializeToString(), key_id.encode())
        metadata = {"encoding": ENCODING, KEY_ID: key_id.encode(), CIPHER: CIPHER_NAME}
        return Payload(metadata=metadata, data=nonce + sealed)

    def decrypt(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCODING:
            return payload  # written before the codec was turned on
        key_id = payload.metadata.get(KEY_ID, b"").decode()
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise CodecError(f"payload encrypted with key {key_id!r}, which is not in the keys file")
        nonce, sealed = payload.data[:NONCE_BYTES], payload.data[NONCE_BYTES:]
        try:
            plain = cipher.decrypt(nonce, sealed, key_id.encode())
        except InvalidTag as err:
            raise CodecError(f"payload encrypted with key {key_id!r} does not decrypt with it") from err
        decoded = Payload()
        decoded.ParseFromString(plain)
        return decoded


def data_converter(codec: PayloadCodec | None) -> DataConverter:
    """The worker's pydantic converter, with ``codec`` and encoded failure attributes when given."""
    if codec is None:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter,
        payload_codec=codec,
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )


def codec_from_env(env: Mapping[str, str] | None = None) -> EncryptionCodec | None:
    """The codec ``LLMISVC_ROUTER_CODEC_KEYS_FILE`` asks for, or None when it is unset."""
    path = (os.environ if env is None else env).get(KEYS_FILE_VARIABLE, "").strip()
    return EncryptionCodec(CodecKeys.load(path)) if path else None


def converter_from_env(env: Mapping[str, str] | None = None) -> DataConverter:
    return data_converter(codec_from_env(env))
