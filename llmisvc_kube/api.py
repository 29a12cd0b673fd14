"""What the product needs from the Kubernetes API, with no ``kubernetes`` import: the
:class:`ClusterApi` protocol, the one error a call raises (:class:`ApiError`) and the one reading of it
(:class:`Failure`), and how long a call may take. :mod:`llmisvc_kube.client` implements the protocol
with the official client; the cluster cache's loops (``llmisvc_cache.watch_loop``) read their stream's
failures the same way."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Protocol

from llmisvc_core.models.kube import ResourceType

Wire = dict[str, Any]

# --- how long a call may take (docs/operations.md, *Timeouts*) ----------------------------------------
#: (connect, read) seconds of one request: a hung server fails it well inside an activity attempt.
REQUEST_TIMEOUT = (3.0, 10.0)
#: A GET that failed fast (no answer, 5xx, 429 with a short Retry-After) is tried again inside the
#: attempt this many times (``llmisvc_kube.client``), after pauses of at most READ_PAUSE_CAP seconds.
REQUEST_RETRIES = 2
READ_BACKOFF = (0.2, 0.5)
READ_PAUSE_CAP = 1.0
#: Only a try that failed within this many seconds is tried again: a slow failure has spent its time.
FAST_FAILURE = 1.0
#: The longest one call may take: a GET's fast failures and pauses, then a full timeout.
REQUEST_BUDGET = sum(REQUEST_TIMEOUT) + REQUEST_RETRIES * (FAST_FAILURE + READ_PAUSE_CAP)


class Failure(enum.Enum):
    """What a failed API call means to its caller; every caller acts on this, never on raw codes."""

    #: 404: no such object, or its kind is not served (no CRD): a read finds nothing, a delete is done.
    ABSENT = "absent"
    #: No answer in time, a cut connection, 5xx, 429: the same request may succeed later.
    TRANSIENT = "transient"
    #: 409: the object changed since it was read, or exists already: read again, then decide again.
    CONFLICT = "conflict"
    #: Any other answer (400, 403, 410, 422...): this request will be refused again as it is.
    REJECTED = "rejected"


class ApiError(Exception):
    """An API call failed. ``status`` is the HTTP code, 0 for a connection error or timeout
    (``timed_out``: the request got no answer in time); ``body`` the server's decoded answer, if any
    (a ``Status``, whose ``details.causes`` name the refused fields)."""

    def __init__(
        self,
        status: int,
        message: str,
        retry_after: float | None = None,
        *,
        timed_out: bool = False,
        body: Wire | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.timed_out = timed_out
        self.body = body

    @property
    def failure(self) -> Failure:
        if self.status == 404:
            return Failure.ABSENT
        if self.status == 409:
            return Failure.CONFLICT
        if self.status == 0 or self.status >= 500 or self.status == 429:
            return Failure.TRANSIENT
        return Failure.REJECTED

    @property
    def expired(self) -> bool:
        """410 Gone on a watch: the server no longer has the events after its resourceVersion."""
        return self.status == 410


class ClusterApi(Protocol):
    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None: ...

    def list_objects(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]: ...

    def create(self, type_: ResourceType, body: Wire) -> Wire: ...

    def create_dry_run(self, type_: ResourceType, body: Wire) -> Wire: ...

    def replace(self, type_: ResourceType, body: Wire) -> Wire: ...

    def replace_status(self, type_: ResourceType, body: Wire) -> Wire: ...

    def patch_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire: ...

    def patch_status_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire: ...

    def delete(
        self,
        type_: ResourceType,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None: ...
