"""The ``Status`` answers the proxy makes up itself: injected faults and an unreachable upstream.

They are shaped as kube-apiserver's own (``kind: Status``, the reason the real server gives for the
code), so the product's error handling meets exactly what it would meet from the real server.
"""

from __future__ import annotations

import json
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

    def body(self) -> bytes:
        return json.dumps(self.status(), separators=(",", ":")).encode()


def too_many_requests(retry_after: int) -> ApiError:
    # Worded as API Priority and Fairness rejects a request.
    return ApiError(
        429,
        "Too many requests, please try again later.",
        details={"causes": [], "retryAfterSeconds": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


def upstream_unreachable(upstream: str, why: str) -> ApiError:
    # 503 rather than 502: a Kubernetes client knows ServiceUnavailable as a reason to try again.
    return ApiError(503, f"the API server proxy could not reach {upstream}: {why}")


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def not_found(path: str) -> ApiError:
    return ApiError(404, f"no proxy control endpoint {path}", details={"causes": []})
