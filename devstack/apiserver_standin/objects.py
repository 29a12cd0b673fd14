"""Small pure helpers on object dicts: timestamps, names, the "spec" part, owner uids.

Stored objects are shared, immutable dicts; these helpers never modify their arguments.
"""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from apiserver_standin import event_versions
from apiserver_standin.errors import ApiError, invalid
from apiserver_standin.registry import ResourceInfo

Obj = dict[str, Any]

_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# The alphabet Kubernetes uses for generateName suffixes (no vowels, no look-alike characters).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# Top-level keys that are not "spec": a change elsewhere bumps metadata.generation.
NON_SPEC_KEYS = frozenset({"metadata", "status", "apiVersion", "kind"})
# Metadata fields owned by the server: kept from the stored object on every update.
SYSTEM_METADATA = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def generated_name(prefix: str) -> str:
    return prefix + "".join(random.choices(_SUFFIX_ALPHABET, k=5))


def meta(obj: Obj) -> Obj:
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def spec_part(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in NON_SPEC_KEYS}


def owner_uids(obj: Obj) -> set[str]:
    return {str(ref.get("uid")) for ref in meta(obj).get("ownerReferences") or [] if ref.get("uid")}


def with_api_version(obj: Obj, info: ResourceInfo) -> Obj:
    """The object as served at ``info``'s version (a shallow copy only when it differs)."""
    if info.stored_as is not None:  # another API's storage form: convert, whatever apiVersion says
        return {**event_versions.from_storage(info.group, info.plural, obj), "apiVersion": info.api_version}
    if obj.get("apiVersion") == info.api_version:
        return obj
    return {**obj, "apiVersion": info.api_version}


def require_object(body: Any) -> Obj:
    if not isinstance(body, dict):
        raise ApiError(400, "the body of the request must be a JSON object")
    return body


def check_kind(info: ResourceInfo, body: Obj) -> None:
    kind = body.get("kind")
    if kind and kind != info.kind:
        raise ApiError(400, f"the kind in the data ({kind}) does not match the expected kind ({info.kind})")
    api_version = body.get("apiVersion")
    if info.group and api_version and not str(api_version).startswith(f"{info.group}/"):
        raise ApiError(
            400,
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({info.api_version})",
        )


def validate_name(info: ResourceInfo, name: str) -> None:
    if not name:
        raise invalid(
            info.kind, info.group, "", [("metadata.name", "Required value: name or generateName is required")]
        )
    if len(name) > 253 or not _SUBDOMAIN_RE.match(name):
        message = (
            f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
        )
        raise invalid(info.kind, info.group, name, [("metadata.name", message)])


def check_namespace(info: ResourceInfo, url_namespace: str, body: Obj) -> str:
    """The namespace the object lives in; 400 when the body names another one than the URL."""
    body_namespace = meta(body).get("namespace")
    if not info.namespaced:
        return ""
    if body_namespace and body_namespace != url_namespace:
        raise ApiError(
            400, "the namespace of the provided object does not match the namespace sent on the request"
        )
    return url_namespace
