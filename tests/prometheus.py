"""A tiny Prometheus for the rollout tests: an HTTP server answering ``/api/v1/query`` with the value the
test sets (a vector of one series), or with no series, and counting the queries it got."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


@dataclass
class FakePrometheus:
    url: str = ""
    value: float | None = 0.0  # None: the query matches no series
    queries: list[str] = field(default_factory=list)


@contextmanager
def serving(value: float | None = 0.0) -> Iterator[FakePrometheus]:
    state = FakePrometheus(value=value)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parsed = urlparse(self.path)
            if parsed.path != "/api/v1/query":
                self.send_error(404)
                return
            state.queries.append(parse_qs(parsed.query).get("query", [""])[0])
            result = [] if state.value is None else [{"metric": {}, "value": [0, str(state.value)]}]
            body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
