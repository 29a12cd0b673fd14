"""The official ``kubernetes`` client: loading it, the REST calls (raw JSON), the reachability check.

Objects travel as plain JSON dicts (the core's models validate them), so any resource, built-in or custom,
goes through the same few calls. Every failure becomes an :class:`~llmisvc_kube.api.ApiError`
carrying the HTTP status, the server's message and any ``Retry-After``; callers act on its
:class:`~llmisvc_kube.api.Failure`. Every request gets a span and a count (:mod:`llmisvc_kube.telemetry`).

Timeouts compose with Temporal's (docs/operations.md, *Timeouts*): urllib3's own retries are off
(:data:`CLIENT_RETRIES`), because Temporal retries the activity, and a request is bounded by
:data:`REQUEST_TIMEOUT`, well inside an activity attempt. A request that fails fast (no answer, 5xx, a
short 429) is tried again inside the attempt (:data:`REQUEST_RETRIES`), so one failed request does not
throw away the others: reads are idempotent, and every write carries what makes a second try harmless.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import urllib3
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from llmisvc_core.models.kube import ResourceType, collection_path
from llmisvc_kube.api import (
    FAST_FAILURE,
    READ_BACKOFF,
    READ_PAUSE_CAP,
    REQUEST_RETRIES,
    REQUEST_TIMEOUT,
    ApiError,
    Failure,
    Wire,
)
from llmisvc_kube.telemetry import DISCOVERY, ApiTelemetry

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
#: urllib3's retries: off. Its default (3, PUT and DELETE included) multiplied the read timeout past the
#: attempt timeout and replayed writes that Temporal retries anyway, after re-validating them.
CLIENT_RETRIES = False
#: Seconds to connect in the reachability check (and in the watch streams, ``llmisvc_kube.stream``).
CONNECT_TIMEOUT = 5.0

ApiClient = k8s.ApiClient  # so the other modules can name the type without importing kubernetes


#: What the kubernetes config loaders raise for a kubeconfig (or service account) they cannot use: a
#: missing key, YAML that does not parse, a field of the wrong shape, an unreadable file.
CONFIG_ERRORS = (
    k8s_config.ConfigException,
    yaml.YAMLError,
    OSError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
)


def load_api_client(
    kubeconfig: str | None = None,
    context: str | None = None,
    connections: int | None = None,
    user_agent: str | None = None,
) -> k8s.ApiClient:
    """A client from a kubeconfig (the argument, ``$KUBECONFIG`` or ~/.kube/config), else in-cluster;
    ``connections`` is the most connections urllib3 keeps open (default: the client's, 5 per CPU);
    ``user_agent`` replaces the client's generic ``OpenAPI-Generator/...`` on every request."""
    configuration = k8s.Configuration()
    configuration.retries = CLIENT_RETRIES
    if connections is not None:
        configuration.connection_pool_maxsize = connections
    try:
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context, client_configuration=configuration
        )
    except (k8s_config.ConfigException, OSError, TypeError):
        if kubeconfig is not None:
            raise
        k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    api_client = k8s.ApiClient(configuration)
    if user_agent is not None:
        api_client.user_agent = user_agent
    return api_client


class KubernetesUnreachable(Exception):  # noqa: N818 - reads as the state it reports
    """The API server did not answer a plain version request."""


def check_reachable(api_client: ApiClient, timeout: float = 10.0) -> None:
    """Fail fast at start-up with one readable line when the API server cannot be reached."""
    host = api_client.configuration.host
    try:
        k8s.VersionApi(api_client).get_code(_request_timeout=(CONNECT_TIMEOUT, timeout))
    except k8s.ApiException as err:
        raise KubernetesUnreachable(
            f"the Kubernetes API at {host} answered {err.status} {err.reason}"
        ) from err
    except (urllib3.exceptions.HTTPError, OSError) as err:
        reason = str(getattr(err, "reason", None) or err)
        # urllib3 prefixes the connection's repr ("HTTPConnection(host=..., port=...): "); the URL says it.
        reason = reason.split("): ", 1)[-1]
        raise KubernetesUnreachable(f"cannot reach the Kubernetes API at {host}: {reason}") from err


def object_path(type_: ResourceType, namespace: str, name: str) -> str:
    return f"{collection_path(type_, namespace)}/{name}"


class KubeClusterApi:
    """:class:`~llmisvc_kube.api.ClusterApi` over ``kubernetes.client.ApiClient``."""

    def __init__(self, api_client: k8s.ApiClient, telemetry: ApiTelemetry | None = None) -> None:
        self.api_client = api_client
        self.telemetry = telemetry or ApiTelemetry()

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        if not name:
            return None  # no object has an empty name, and the path would name the whole collection
        try:
            return self._call("GET", object_path(type_, namespace, name), type_, namespace)
        except ApiError as err:
            if err.failure is Failure.ABSENT:
                return None  # absent, or the kind is not served: both read as "no such object"
            raise

    def list_objects(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        query = [("labelSelector", selector)] if selector else []
        try:
            result = self._call("GET", collection_path(type_, namespace), type_, namespace, query=query)
        except ApiError as err:
            if err.failure is Failure.ABSENT:
                return []
            raise
        return [_with_kind(item, type_) for item in result.get("items") or []]

    def create(self, type_: ResourceType, body: Wire) -> Wire:
        namespace = body.get("metadata", {}).get("namespace") or ""
        return self._call("POST", collection_path(type_, namespace), type_, namespace, body=body)

    def create_dry_run(self, type_: ResourceType, body: Wire) -> Wire:
        """A create with ``dryRun=All``: the whole admission chain runs, nothing is stored. Field
        validation is left at the server's default, as controller-runtime leaves it."""
        namespace = body.get("metadata", {}).get("namespace") or ""
        path = collection_path(type_, namespace)
        return self._call("POST", path, type_, namespace, query=[("dryRun", "All")], body=body)

    def replace(self, type_: ResourceType, body: Wire) -> Wire:
        meta = body.get("metadata", {})
        namespace = meta.get("namespace") or ""
        return self._call("PUT", object_path(type_, namespace, meta["name"]), type_, namespace, body=body)

    def replace_status(self, type_: ResourceType, body: Wire) -> Wire:
        meta = body.get("metadata", {})
        namespace = meta.get("namespace") or ""
        path = object_path(type_, namespace, meta["name"]) + "/status"
        return self._call("PUT", path, type_, namespace, subresource="status", body=body)

    def patch_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire:
        path = object_path(type_, namespace, name)
        return self._call("PATCH", path, type_, namespace, body=patch, content_type=MERGE_PATCH)

    def patch_status_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire:
        """A JSON merge patch of the status subresource: the spec is not sent, so not validated again."""
        path = object_path(type_, namespace, name) + "/status"
        return self._call(
            "PATCH", path, type_, namespace, subresource="status", body=patch, content_type=MERGE_PATCH
        )

    def delete(
        self,
        type_: ResourceType,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        """Delete an object, only if it still has this ``uid`` (and ``resource_version``) when given:
        the server answers 409 otherwise. Absent already (404) is success."""
        options = None
        if uid or resource_version:
            preconditions = k8s.V1Preconditions(uid=uid, resource_version=resource_version)
            options = self.api_client.sanitize_for_serialization(  # type: ignore[no-untyped-call]
                k8s.V1DeleteOptions(api_version="v1", kind="DeleteOptions", preconditions=preconditions)
            )
        try:
            self._call("DELETE", object_path(type_, namespace, name), type_, namespace, body=options)
        except ApiError as err:
            if err.failure is not Failure.ABSENT:
                raise

    def _call(
        self,
        method: str,
        path: str,
        type_: ResourceType | None,  # None: a discovery request
        namespace: str = "",
        *,
        subresource: str = "",
        query: list[tuple[str, str]] | None = None,
        body: Wire | None = None,
        content_type: str = JSON,
    ) -> Wire:
        # Writes too: each carries what makes a second try harmless (a create of an existing object is a
        # 409, a PUT its resourceVersion, a DELETE its preconditions, a merge patch the same patch): when
        # a first try landed but its answer was lost, the second one's 409 makes the pass plan again
        # (activities.phase_writes), and a DELETE's 404 is success.
        retries = REQUEST_RETRIES
        for attempt in range(retries + 1):
            started = time.monotonic()
            try:
                return self._send(method, path, type_, namespace, subresource, query, body, content_type)
            except ApiError as err:
                pause = _retry_pause(err, retries - attempt, time.monotonic() - started)
                if pause is None:
                    raise
                time.sleep(pause)
        raise AssertionError("unreachable: the last try returns or raises")

    def _send(
        self,
        method: str,
        path: str,
        type_: ResourceType | None,
        namespace: str,
        subresource: str,
        query: list[tuple[str, str]] | None,
        body: Wire | None,
        content_type: str,
    ) -> Wire:
        """One request, one span, one count."""
        headers = {"Accept": JSON, "Content-Type": content_type}
        _, url, headers, payload, post = self.api_client.param_serialize(
            method,
            path,
            query_params=query or [],
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        resource = DISCOVERY if type_ is None else "/".join(filter(None, (type_.plural, subresource)))
        scope = namespace if type_ is not None and type_.namespaced else ""
        with self.telemetry.request(method, resource, scope) as outcome:
            try:
                response = self.api_client.call_api(
                    method, url, headers, payload, post, _request_timeout=REQUEST_TIMEOUT
                )
                data: bytes = response.read()  # type: ignore[no-untyped-call]
            except k8s.ApiException as err:  # raised by the client for TLS problems, with status 0
                raise ApiError(err.status or 0, f"{method} {path}: {err.reason}") from err
            except urllib3.exceptions.TimeoutError as err:
                raise ApiError(0, f"{method} {path}: {err}", timed_out=True) from err
            except (urllib3.exceptions.HTTPError, OSError) as err:
                raise ApiError(0, f"{method} {path}: {err}") from err
            outcome.status = response.status
            if not 200 <= response.status < 300:
                raise api_error(method, path, response.status, data, response.headers)
        return json.loads(data) if data else {}


def _retry_pause(err: ApiError, left: int, took: float) -> float | None:
    """How long to wait before trying a failed request again (``left`` tries left), or None to give up to
    Temporal's retry: only fast failures are tried again, so a request stays within ``REQUEST_BUDGET``."""
    if left <= 0 or err.timed_out or took > FAST_FAILURE:
        return None
    backoff = READ_BACKOFF[min(REQUEST_RETRIES - left, len(READ_BACKOFF) - 1)]
    if err.status == 429:
        wait = err.retry_after if err.retry_after is not None else backoff
        return wait if wait <= READ_PAUSE_CAP else None  # longer: Temporal waits it out (activities.errors)
    if err.failure is Failure.TRANSIENT:
        return backoff
    return None


def api_error(method: str, path: str, status: int, data: bytes, headers: Mapping[str, str]) -> ApiError:
    """The error of a request the server answered with ``status`` (not 2xx): its ``Status`` message,
    decoded body and ``Retry-After``."""
    message = f"{method} {path}: HTTP {status}"
    decoded: Any = None
    try:
        decoded = json.loads(data)
        if isinstance(decoded, dict) and decoded.get("message"):
            message = str(decoded["message"])
    except ValueError:
        pass
    retry_after = headers.get("Retry-After")
    try:
        delay = max(float(retry_after), 0.0) if retry_after is not None else None
    except ValueError:
        delay = None
    return ApiError(status, message, delay, body=decoded if isinstance(decoded, dict) else None)


def _with_kind(item: Wire, type_: ResourceType) -> Wire:
    """List items come without apiVersion/kind; put them back so the object stands alone."""
    return {"apiVersion": type_.api_version, "kind": type_.kind, **item}
