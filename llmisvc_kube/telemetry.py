"""Spans and counts of the Kubernetes API requests the activities make (no ``kubernetes`` import here).

``KubeClusterApi`` makes each request inside :meth:`ApiTelemetry.request`: a client span named like
``GET httproutes``, which nests under the activity's span (the SDK runs sync activities in a copy of the
caller's context), so a pass's trace shows its API calls; and one count in
``llmisvc_router_kube_requests`` by ``verb`` (the HTTP method), ``resource`` and ``code`` (the HTTP
status, ``0`` when no response came).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from temporalio.common import MetricMeter

from llmisvc_kube.api import ApiError

REQUESTS_METRIC = "llmisvc_router_kube_requests"
#: The resource of discovery requests (``GET /apis/GROUP/VERSION``), which name no resource.
DISCOVERY = "discovery"
#: Span attributes: OpenTelemetry's HTTP and Kubernetes names.
METHOD = "http.request.method"
STATUS_CODE = "http.response.status_code"
RESOURCE = "k8s.resource"
NAMESPACE = "k8s.namespace.name"


@dataclass
class Response:
    """What :meth:`ApiTelemetry.request` learns about the response; the caller fills it in."""

    status: int = 0
    error: str | None = None  # the message of the ApiError the request ended with


class ApiTelemetry:
    def __init__(self, meter: MetricMeter = MetricMeter.noop) -> None:
        self._tracer = trace.get_tracer(__name__)
        self._requests = meter.create_counter(
            REQUESTS_METRIC, "Kubernetes API requests by verb, resource and HTTP status code (0: none)"
        )

    @contextmanager
    def request(self, verb: str, resource: str, namespace: str) -> Iterator[Response]:
        attributes = {METHOD: verb, RESOURCE: resource, **({NAMESPACE: namespace} if namespace else {})}
        # The status is set here, not from the exception: a 404 is how this client learns that an object
        # is absent, an answer rather than a failure.
        with self._tracer.start_as_current_span(
            f"{verb} {resource}",
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            response = Response()
            try:
                yield response
            except ApiError as err:
                response.status, response.error = err.status, err.message
                raise
            finally:
                if response.status:
                    span.set_attribute(STATUS_CODE, response.status)
                if response.status == 0 or (response.status >= 400 and response.status != 404):
                    span.set_status(StatusCode.ERROR, response.error)
                self._requests.add(1, {"verb": verb, "resource": resource, "code": str(response.status)})
