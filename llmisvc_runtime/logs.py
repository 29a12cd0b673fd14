"""How the long-running commands (``worker``, ``run``, ``watch``, ``dev``) log: one line per record.

``text`` (the default) is for a person at a terminal: ``time LEVEL logger: message``. ``json`` is for a
cluster's log collector: one JSON object per line with ``time``, ``level``, ``logger``, ``message`` and,
from workflow and activity code, the Temporal ids as fields of their own (``temporal_workflow``,
``temporal_activity``) instead of the dict the SDK would append to every message, and, when a span is
current where the record is made, ``trace_id`` and ``span_id`` in lowercase hex (32 and 16 digits, as
OpenTelemetry's log data model writes them) to find the line's trace: the pass's span in workflow code
(the pass's own lines), ``RunActivity:NAME`` in activities.

A record carrying an exception shows it as one line (``ErrorType: message``) unless the level is
``debug``, where the full traceback follows: the SDK logs each failed activity attempt with its
traceback, which would otherwise fill the terminal on every re-check of a broken service.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

from opentelemetry import trace
from temporalio import activity, workflow

LogFormat = Literal["text", "json"]
FORMATS: tuple[LogFormat, ...] = ("text", "json")
LEVELS = ("debug", "info", "warning", "error")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: The extras the SDK's workflow and activity loggers attach; kept as fields in JSON.
TEMPORAL_EXTRAS = ("temporal_workflow", "temporal_activity")


def add_arguments(parser: Any) -> None:
    """``--log-format`` and ``--log-level`` on a long-running command's parser."""
    parser.add_argument(
        "--log-format",
        choices=FORMATS,
        default="text",
        help="text: one readable line per record (default); json: one JSON object per line, for log "
        "collectors",
    )
    parser.add_argument(
        "--log-level", choices=LEVELS, default="info", help="debug also prints tracebacks (default: info)"
    )


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Ours, so that configuring again replaces it and leaves other handlers alone."""


def configure(log_format: LogFormat = "text", level: str = "info") -> logging.Handler:
    """Install the process's handler on the root logger and quiet the SDK's appended dicts."""
    debug = level == "debug"
    handler = _Handler(sys.stderr)
    handler.setFormatter(JsonFormatter(debug) if log_format == "json" else TextFormatter(debug))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # The workflow id, run id, attempt… are in the extras (and so in JSON); not appended to each line.
    workflow.logger.workflow_info_on_message = False
    activity.logger.activity_info_on_message = False
    # urllib3 logs each connection retry; the callers report failures once, in their own words.
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    return handler


def one_line(exc: BaseException) -> str:
    text = (str(exc).strip() or type(exc).__name__).splitlines()[0]
    return f"{type(exc).__name__}: {text}"


def _exception_of(record: logging.LogRecord) -> BaseException | None:
    if record.exc_info and record.exc_info[1] is not None:
        return record.exc_info[1]
    return None


def trace_fields() -> dict[str, str]:
    """``trace_id`` and ``span_id`` of the current span, none without one. Read when the record is
    formatted, which the process's handler does in the thread and context that logged it."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {
        "trace_id": trace.format_trace_id(context.trace_id),
        "span_id": trace.format_span_id(context.span_id),
    }


class TextFormatter(logging.Formatter):
    def __init__(self, tracebacks: bool) -> None:
        super().__init__(TEXT_FORMAT)
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        exc = _exception_of(record)
        if exc is None or self.tracebacks:
            return super().format(record)
        # A copy without the traceback: other handlers of the same record still get it whole.
        plain = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None})
        return f"{super().format(plain)}: {one_line(exc)}"


class JsonFormatter(logging.Formatter):
    def __init__(self, tracebacks: bool) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in TEMPORAL_EXTRAS:
            if isinstance(getattr(record, name, None), dict):
                document[name] = getattr(record, name)
        document.update(trace_fields())
        exc = _exception_of(record)
        if exc is not None:
            document["error"] = one_line(exc)
            if self.tracebacks:
                document["traceback"] = self.formatException(record.exc_info)  # type: ignore[arg-type]
        return json.dumps(document, default=str)
