"""The log lines a person reads: one per pass that did something, triggers shown as triggers, errors on one
line (tracebacks at debug only), JSON for log collectors."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import format_span_id, format_trace_id

from activities.models import ServiceKey
from llmisvc_runtime.logs import JsonFormatter, TextFormatter
from workflows.models import PassSummary
from workflows.pass_log import pass_line, readiness_line

KEY = ServiceKey(namespace="llm", name="opt")
SECOND = timedelta(seconds=1)


def summary(outcome: str = "reconciled", **fields: Any) -> PassSummary:
    return PassSummary(outcome=outcome, **fields)


def test_a_pass_line_says_outcome_writes_changed_conditions_duration_and_its_triggers_as_triggers() -> None:
    after = summary(
        writes=2, status_written=True, conditions={"RouterReady": "True", "HTTPRoutesReady": "True"}
    )
    before = summary(conditions={"RouterReady": "False(GatewayNotReady)", "HTTPRoutesReady": "True"})
    line = pass_line(KEY, ["HTTPRoute llm/opt-kserve-route modified"] * 3, before, after, SECOND)
    assert line == (
        "llm/opt: reconciled in 1.0s; wrote 2 objects, status; "
        "conditions: RouterReady False(GatewayNotReady) -> True; "
        "after: HTTPRoute llm/opt-kserve-route modified"
    )


def test_a_pass_that_changed_nothing_has_no_line() -> None:
    same = summary(conditions={"RouterReady": "True"})
    assert pass_line(KEY, ["resync"], same, same.model_copy(), SECOND) is None


def test_a_failed_pass_is_one_line_with_its_reason_once_then_quiet() -> None:
    failed = summary("error", message="InvalidLLMInferenceService: field spec.router.route: bad")
    line = pass_line(KEY, ["started"], None, failed, SECOND)
    assert line is not None and "\n" not in line and "field spec.router.route: bad" in line
    assert pass_line(KEY, ["re-check"], failed, failed.model_copy(), SECOND) is None


def test_readiness_lines_only_on_a_change() -> None:
    ready = summary(conditions={"RouterReady": "True"}, url="http://gw/llm/opt")
    down = summary(conditions={"RouterReady": "False(GatewayNotReady)"})
    assert readiness_line(KEY, down, ready) == "llm/opt is Ready (RouterReady True) at http://gw/llm/opt"
    assert readiness_line(KEY, ready, ready) is None
    assert (
        readiness_line(KEY, ready, down) == "llm/opt is no longer Ready: RouterReady False(GatewayNotReady)"
    )
    assert readiness_line(KEY, None, down) is None


def _record_with_exception() -> logging.LogRecord:
    try:
        raise ValueError("the API server refused it\nsecond line")
    except ValueError:
        import sys

        return logging.LogRecord("x", logging.WARNING, __file__, 1, "activity failed", None, sys.exc_info())


def test_an_exception_is_one_line_unless_debug() -> None:
    record = _record_with_exception()
    text = TextFormatter(tracebacks=False).format(record)
    assert text.endswith("activity failed: ValueError: the API server refused it") and "\n" not in text
    assert "Traceback" in TextFormatter(tracebacks=True).format(_record_with_exception())


def test_json_lines_carry_the_temporal_ids_as_fields() -> None:
    record = logging.LogRecord(
        "temporalio.workflow", logging.INFO, __file__, 1, "llm/opt is Ready", None, None
    )
    record.temporal_workflow = {"workflow_id": "llmisvc/llm/opt"}
    document = json.loads(JsonFormatter(tracebacks=False).format(record))
    assert document["message"] == "llm/opt is Ready" and document["level"] == "info"
    assert document["temporal_workflow"] == {"workflow_id": "llmisvc/llm/opt"}
    failed = json.loads(JsonFormatter(tracebacks=False).format(_record_with_exception()))
    assert failed["error"] == "ValueError: the API server refused it" and "traceback" not in failed


def test_json_lines_carry_the_current_spans_ids_in_hex_and_none_without_a_span() -> None:
    formatter = JsonFormatter(tracebacks=False)
    tracer = TracerProvider().get_tracer(__name__)  # not the global one: current all the same
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "inside", None, None)
    with tracer.start_as_current_span("work") as span:
        inside = json.loads(formatter.format(record))
    context = span.get_span_context()
    assert inside["trace_id"] == format_trace_id(context.trace_id) and len(inside["trace_id"]) == 32
    assert inside["span_id"] == format_span_id(context.span_id) and len(inside["span_id"]) == 16
    outside = json.loads(formatter.format(record))
    assert "trace_id" not in outside and "span_id" not in outside
