"""API errors and the ``Status`` objects the stand-in answers with, shaped as a real kube-apiserver's.

Every failure a handler can meet is an :class:`ApiError`; the HTTP layer turns it into a ``Status``
body with the matching code, so a client never sees a Python traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ApiError(Exception):
    """An error answered as a ``Status``; ``headers`` carries e.g. ``Retry-After``."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code, "Unknown")
        self.details = details
        self.headers = dict(headers or {})

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def qualified(group: str, plural: str) -> str:
    """``configmaps`` or ``httproutes.gateway.networking.k8s.io``, as real messages name a resource."""
    return f"{plural}.{group}" if group else plural


def _details(group: str, plural: str, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    return details


def not_found(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        404, f'{qualified(group, plural)} "{name}" not found', details=_details(group, plural, name)
    )


def resource_not_found(path: str) -> ApiError:
    # What a real server says for a URL that names no installed resource.
    return ApiError(404, "the server could not find the requested resource", details={"causes": []})


def already_exists(group: str, plural: str, name: str) -> ApiError:
    message = f'{qualified(group, plural)} "{name}" already exists'
    return ApiError(409, message, "AlreadyExists", _details(group, plural, name))


def conflict(group: str, plural: str, name: str, why: str) -> ApiError:
    message = f'Operation cannot be fulfilled on {qualified(group, plural)} "{name}": {why}'
    return ApiError(409, message, "Conflict", _details(group, plural, name))


def stale_conflict(group: str, plural: str, name: str) -> ApiError:
    return conflict(
        group,
        plural,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    )


Cause = tuple[str, str] | tuple[str, str, str]  # (field, message) or (field, message, reason)


def _reason_of(message: str) -> str:
    # The cause's reason follows its message's first words, as field.ErrorType does.
    for prefix, reason in (
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Too long", "FieldValueTooLong"),
        ("Too many", "FieldValueTooMany"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Forbidden", "FieldValueForbidden"),
    ):
        if message.startswith(prefix):
            return reason
    return "FieldValueInvalid"


def invalid(kind: str, group: str, name: str, causes: Sequence[Cause]) -> ApiError:
    """422 Invalid, worded as the real server: ``Kind.group "name" is invalid: field: message``.

    ``causes`` are (field, message[, reason]) triples; several are listed in brackets.
    """
    summary = ", ".join(f"{c[0]}: {c[1]}" for c in causes)
    qualified_kind = f"{kind}.{group}" if group else kind
    message = f'{qualified_kind} "{name}" is invalid: ' + (f"[{summary}]" if len(causes) > 1 else summary)
    details: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "causes": [
            {"reason": c[2] if len(c) > 2 else _reason_of(c[1]), "message": c[1], "field": c[0]}
            for c in causes
        ],
    }
    if group:
        details["group"] = group
    return ApiError(422, message, "Invalid", details)


def forbidden(group: str, plural: str, name: str, why: str) -> ApiError:
    message = f'{qualified(group, plural)} "{name}" is forbidden: {why}'
    return ApiError(403, message, "Forbidden", _details(group, plural, name))


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def gone(message: str) -> ApiError:
    return ApiError(410, message, "Expired")


def too_many_requests(retry_after: int) -> ApiError:
    return ApiError(
        429,
        "Too many requests, please try again later.",
        details={"causes": [], "retryAfterSeconds": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


def unsupported_media_type(accepted: Sequence[str]) -> ApiError:
    """415, worded as the API server's content negotiation words it."""
    joined = ", ".join(accepted)
    return ApiError(
        415, f"the body of the request was in an unknown format - accepted media types include: {joined}"
    )


def internal_error(message: str) -> ApiError:
    return ApiError(500, f"Internal error occurred: {message}")
