"""A collection's list and watch stream over the official client, for the cluster cache's loops
(``llmisvc_cache.watch_loop`` keeps their logic: resume, relist after 410, backoff).

Every failure is an :class:`~llmisvc_kube.api.ApiError`, read as a REST call's is
(:class:`~llmisvc_kube.api.Failure`, and :attr:`~llmisvc_kube.api.ApiError.expired` for 410): an answer
that is not 200, an ``ERROR`` event inside the stream, a request or a stream that breaks.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import urllib3
from kubernetes.watch.watch import iter_resp_lines

from llmisvc_core.models.kube import ResourceType, collection_path
from llmisvc_kube.api import ApiError, Wire
from llmisvc_kube.client import CONNECT_TIMEOUT, ApiClient, api_error

JSON = "application/json"
LIST_READ_TIMEOUT = 60.0


class Collection:
    """The open answer (200) to a GET of a collection: a list to read whole, or a watch to follow."""

    def __init__(self, path: str, response: Any) -> None:  # a urllib3 response, not yet read
        self.path = path
        self._response = response

    def body(self) -> Wire:
        """The whole answer, decoded (a list)."""
        try:
            decoded: Wire = json.loads(self._response.data or b"{}")
            return decoded
        finally:
            self._response.release_conn()

    def events(self) -> Iterator[Wire]:
        """The watch events, one by one, until the server ends the stream."""
        try:
            for line in iter_resp_lines(self._response):  # type: ignore[no-untyped-call]
                if not line.strip():
                    continue
                event = json.loads(line)
                if event.get("type") == "ERROR":
                    obj = event.get("object") or {}
                    code = obj.get("code")
                    raise ApiError(int(code or 0), f"watch error {code}: {obj.get('message')}")
                yield event
        except (urllib3.exceptions.HTTPError, OSError) as err:
            raise ApiError(0, f"watch {self.path}: {err}") from err

    def cut(self) -> None:
        """End the stream from another thread; a stream already finished or released is left alone."""
        with contextlib.suppress(ValueError, RuntimeError, OSError):
            self._response.shutdown()

    def close(self) -> None:
        """Never hand a cut or half-read stream back to the pool."""
        self._response.close()
        self._response.release_conn()


def get_collection(
    api_client: ApiClient,
    type_: ResourceType,
    namespace: str,
    query: list[tuple[str, str]],
    read_timeout: float = LIST_READ_TIMEOUT,
) -> Collection:
    """GET a collection (a list, or with ``watch=true`` in ``query`` a watch); its open answer."""
    path = collection_path(type_, namespace)
    _, url, headers, _, _ = api_client.param_serialize(
        "GET", path, query_params=query, header_params={"Accept": JSON}, auth_settings=["BearerToken"]
    )
    try:
        answer = api_client.call_api("GET", url, headers, _request_timeout=(CONNECT_TIMEOUT, read_timeout))
    except (urllib3.exceptions.HTTPError, OSError) as err:
        raise ApiError(0, f"GET {path}: {err}") from err
    response = answer.response
    if response.status == 200:
        return Collection(path, response)
    data = response.data
    response.release_conn()
    raise api_error("GET", path, response.status, data, response.headers)
