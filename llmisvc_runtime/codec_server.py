"""A Temporal codec server: the ``/encode`` and ``/decode`` endpoints the Temporal UI and CLI call to show
payloads that ``llmisvc_runtime.codec`` encrypted (``llmisvc-router codec-server``).

Both take and return ``temporal.api.common.v1.Payloads`` in protobuf JSON (``{"payloads": [...]}``); the
UI may put a prefix before them (``https://codec.example/llm/decode``). The UI calls from the browser, so
the answers carry CORS headers for the UI's origin. Whoever can reach the server can decrypt: it listens
on localhost unless told otherwise, and belongs behind the same access control as the UI.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads

from llmisvc_runtime.codec import CodecError, EncryptionCodec

log = logging.getLogger(__name__)

#: The Temporal dev server's UI (``temporal server start-dev``, ``make run``).
DEFAULT_ORIGINS = ("http://localhost:8233", "http://127.0.0.1:8233")
MAX_BODY = 16 * 1024 * 1024
ALLOWED_HEADERS = "Content-Type, X-Namespace, Authorization"


def make_handler(codec: EncryptionCodec, origins: Sequence[str]) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``codec``; ``origins`` may be ``["*"]`` to allow any."""
    operations: dict[str, Callable[[Payload], Payload]] = {"encode": codec.encrypt, "decode": codec.decrypt}

    class CodecHandler(BaseHTTPRequestHandler):
        server_version = "llmisvc-router-codec"

        def do_OPTIONS(self) -> None:
            self._answer(204, b"")

        def do_POST(self) -> None:
            operation = operations.get(self.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1])
            if operation is None:
                self._answer(404, b"not found: POST .../encode or .../decode\n")
                return
            length = int(self.headers.get("Content-Length") or 0) if self._length_ok() else -1
            if length < 0:
                self._answer(400, b"a Content-Length is required\n")
                return
            if length > MAX_BODY:
                self._answer(413, b"request body too large\n")
                return
            try:
                request = json_format.Parse(self.rfile.read(length), Payloads())
                answer = Payloads(payloads=[operation(p) for p in request.payloads])
            except (json_format.ParseError, CodecError) as err:
                self._answer(400, f"{err}\n".encode())
                return
            self._answer(200, json_format.MessageToJson(answer).encode(), "application/json")

        def _length_ok(self) -> bool:
            return (self.headers.get("Content-Length") or "0").strip().isdigit()

        def _answer(self, code: int, body: bytes, content_type: str = "text/plain") -> None:
            self.send_response(code)
            origin = self.headers.get("Origin")
            if origin and ("*" in origins or origin in origins):
                self.send_header("Access-Control-Allow-Origin", origin)
                self.send_header("Access-Control-Allow-Credentials", "true")
                self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", ALLOWED_HEADERS)
                self.send_header("Vary", "Origin")
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            log.debug("%s %s", self.address_string(), format % args)

    return CodecHandler


def bind(codec: EncryptionCodec, host: str, port: int, origins: Sequence[str]) -> ThreadingHTTPServer:
    """The server bound to ``host:port`` (port 0: any free one), not serving yet."""
    return ThreadingHTTPServer((host, port), make_handler(codec, origins))


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """Serve in a thread; yields the base URL."""
    # A short poll interval: shutting down waits for the serving loop's next look at the flag.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="codec-server", daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
