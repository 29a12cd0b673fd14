"""What the activities need from the Kubernetes API and from the process's cluster cache, as protocols
with no ``kubernetes`` import, and the errors they tell apart. ``activities.kube_api`` implements the
API with the official client; ``llmisvc_cache.cache.ClusterCache`` implements the view."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from llmisvc_cache.model import SeenVersion
from llmisvc_core.models.kube import ResourceType

Wire = dict[str, Any]

# --- how long a call may take (docs/operations.md, *Timeouts*) ----------------------------------------
#: (connect, read) seconds of one request: a hung server fails it well inside an activity attempt.
REQUEST_TIMEOUT = (3.0, 10.0)
#: A GET that failed fast (no answer, 5xx, 429 with a short Retry-After) is tried again inside the
#: attempt this many times (``activities.kube_api``), after pauses of at most READ_PAUSE_CAP seconds.
REQUEST_RETRIES = 2
READ_BACKOFF = (0.2, 0.5)
READ_PAUSE_CAP = 1.0
#: Only a try that failed within this many seconds is tried again: a slow failure has spent its time.
FAST_FAILURE = 1.0
#: The longest one call may take: a GET's fast failures and pauses, then a full timeout.
REQUEST_BUDGET = sum(REQUEST_TIMEOUT) + REQUEST_RETRIES * (FAST_FAILURE + READ_PAUSE_CAP)


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
    def is_transient(self) -> bool:
        """Connection errors, timeouts, 5xx, 429 and conflicts clear up by themselves; other 4xx do not."""
        return self.status == 0 or self.status >= 500 or self.status in (409, 429)


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


class ClusterView(Protocol):
    """The watch-fed cache the activities read from (``llmisvc_cache.cache.ClusterCache``)."""

    def wait_synced(self, timeout: float) -> bool: ...

    def unsynced(self) -> list[str]: ...

    def wait_for(self, seen: Iterable[SeenVersion], timeout: float) -> list[SeenVersion]: ...

    def is_installed(self, type_: ResourceType) -> bool: ...

    def knows(self, type_: ResourceType, namespace: str, name: str) -> bool: ...

    def covers_list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> bool: ...

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None: ...

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]: ...

    def observe(self, type_: ResourceType, obj: Wire) -> None: ...

    def observe_absent(self, type_: ResourceType, namespace: str, name: str) -> None: ...

    def observe_deleted(self, type_: ResourceType, namespace: str, name: str) -> None: ...
