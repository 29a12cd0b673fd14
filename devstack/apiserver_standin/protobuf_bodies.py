"""Request bodies in ``application/vnd.kubernetes.protobuf``, decoded into the JSON objects they encode.

kubectl sends built-in kinds (``kubectl create namespace|configmap|deployment|secret``) as protobuf
and does not fall back to JSON when a server answers 415, so the stand-in reads them. The message
types come from the official Kubernetes ``.proto`` files, compiled into ``proto_descriptors/
kubernetes.desc`` (see its README) and loaded into a ``google.protobuf`` descriptor pool.

The wire format: the magic ``k8s\\0``, then a ``runtime.Unknown`` whose ``typeMeta`` names the kind
and whose ``raw`` is the object's message. Conversion to JSON follows what the API server's JSON
encoding of the Go type would print: ``Time`` as RFC 3339, ``IntOrString`` as a number or a string,
``Quantity`` as its string, ``bytes`` as base64, ``RawExtension`` as the JSON it holds, and the empty
values Go's ``omitempty`` leaves out (empty strings, lists, maps, zero times) left out.
"""

from __future__ import annotations

import base64
import functools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from apiserver_standin.errors import bad_request

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_DESCRIPTORS = Path(__file__).with_name("proto_descriptors") / "kubernetes.desc"
_META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_PACKAGES = {"v1": "k8s.io.api.core.v1", "apps/v1": "k8s.io.api.apps.v1", "meta.k8s.io/v1": _META}


@functools.cache
def _pool() -> descriptor_pool.DescriptorPool:
    files = descriptor_pb2.FileDescriptorSet.FromString(_DESCRIPTORS.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return pool


def _message_class(full_name: str) -> Any:
    return message_factory.GetMessageClass(_pool().FindMessageTypeByName(full_name))


def decode(raw: bytes) -> dict[str, Any]:
    """The JSON object a protobuf request body encodes; 400 if it is not one this server knows."""
    if not raw.startswith(MAGIC):
        raise bad_request("the protobuf body does not start with the Kubernetes magic number")
    try:
        unknown = _message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(raw[len(MAGIC) :])
        api_version, kind = unknown.typeMeta.apiVersion, unknown.typeMeta.kind
        package = _PACKAGES.get(api_version)
        if package is None:
            raise bad_request(f"no protobuf decoding for {api_version}, Kind={kind}; send JSON")
        try:
            cls = _message_class(f"{package}.{kind}")
        except KeyError as exc:
            raise bad_request(f"no protobuf decoding for {api_version}, Kind={kind}; send JSON") from exc
        message = cls.FromString(unknown.raw)
    except DecodeError as exc:
        raise bad_request(f"the protobuf body cannot be decoded: {exc}") from exc
    return {"apiVersion": api_version, "kind": kind, **to_json(message)}


def to_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        converted = _field_value(field, value)
        if converted not in (None, "", [], {}):
            out[field.name] = converted
    return out


def _field_value(field: FieldDescriptor, value: Any) -> Any:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {key: _single(value_field, item) for key, item in value.items()}
    if field.is_repeated:
        return [_single(field, item) for item in value]
    return _single(field, value)


def _single(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    if field.type != FieldDescriptor.TYPE_MESSAGE or field.message_type is None:
        return value
    name = field.message_type.full_name
    if name in (f"{_META}.Time", f"{_META}.MicroTime"):
        if not value.seconds and not value.nanos:
            return None
        moment = datetime.fromtimestamp(value.seconds, UTC)
        if name.endswith("MicroTime"):
            return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{value.nanos // 1000:06d}Z"
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        return value.intVal if value.type == 0 else value.strVal
    if name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        return value.string
    if name == "k8s.io.apimachinery.pkg.runtime.RawExtension":
        return json.loads(value.raw) if value.raw else None
    return to_json(value)
