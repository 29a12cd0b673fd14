"""The listening side: a threaded TLS server with one thread and one :class:`Session` per connection.

The TLS handshake runs in the connection's own thread (the listening socket is wrapped with
``do_handshake_on_connect=False``), so a slow or broken client never holds up ``accept``. Sessions are
tracked so that watch streams can be cut, and every connection ended, from another thread, and so
that one thread can end the watches whose clients have gone.
"""

from __future__ import annotations

import contextlib
import select
import socket
import socketserver
import ssl
import sys
import threading
from typing import Any

from llmisvc_devstack.proxy.counters import RequestCounter
from llmisvc_devstack.proxy.faults import FaultInjector
from llmisvc_devstack.proxy.upstream import Upstream, UpstreamLink

HANGUP_POLL = 0.5  # seconds between looks for clients that left their watch


class Session:
    """One client connection: its socket, its upstream link, and whether it is streaming a watch."""

    def __init__(self, sock: socket.socket, link: UpstreamLink) -> None:
        self.sock = sock
        self.link = link
        self._lock = threading.Lock()
        self._watching = False
        self._cut = False
        self.cut_abruptly = False

    def start_watch(self) -> None:
        with self._lock:
            self._watching, self._cut, self.cut_abruptly = True, False, False

    def end_watch(self) -> None:
        with self._lock:
            self._watching = False

    @property
    def watching(self) -> bool:
        return self._watching

    def is_cut(self) -> bool:
        return self._cut

    def cut_watch(self, abruptly: bool) -> bool:
        """End the watch this session streams, if any: waking its blocked upstream read ends it."""
        with self._lock:
            if not self._watching or self._cut:
                return False
            self._cut, self.cut_abruptly = True, abruptly
            self.link.abort()
        return True

    def abort_downstream(self) -> None:
        """Cut the client's connection without a word: no final chunk, no close_notify."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)

    def abort(self) -> None:
        self.abort_downstream()
        self.link.abort()


class ProxyServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """What every handler shares: the upstream, the fault rules, the counters and the sessions.

    A plain ``TCPServer`` rather than ``http.server.HTTPServer``: the latter resolves its host name
    (``getfqdn``) at bind, which can stall on a machine without DNS.
    """

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[socketserver.BaseRequestHandler],
        context: ssl.SSLContext | None,
        upstream: Upstream,
        faults: FaultInjector,
        counter: RequestCounter,
        idle_timeout: float,
    ) -> None:
        self.context = context
        self.upstream = upstream
        self.faults = faults
        self.counter = counter
        self.idle_timeout = idle_timeout
        self.stopping = threading.Event()
        self._sessions: set[Session] = set()
        self._sessions_lock = threading.Lock()
        super().__init__(address, handler)

    def server_bind(self) -> None:
        super().server_bind()
        if self.context is not None:
            self.socket = self.context.wrap_socket(
                self.socket, server_side=True, do_handshake_on_connect=False
            )

    def open_session(self, sock: socket.socket) -> Session:
        session = Session(sock, UpstreamLink(self.upstream))
        with self._sessions_lock:
            self._sessions.add(session)
        return session

    def close_session(self, session: Session) -> None:
        with self._sessions_lock:
            self._sessions.discard(session)
        session.link.close()

    def sessions(self) -> list[Session]:
        with self._sessions_lock:
            return list(self._sessions)

    def cut_watches(self, abruptly: bool = False) -> int:
        """End every watch stream open now; how many were."""
        return sum(session.cut_watch(abruptly) for session in self.sessions())

    def end_abandoned_watches(self, poll_seconds: float = HANGUP_POLL) -> None:
        """Until stopping: end the watch streams whose client hung up.

        A relay thread blocks on the upstream and would notice a client gone only at its next write,
        which on a quiet watch may be a minute away (the next bookmark), holding a thread and an
        upstream watch meanwhile. A client sends nothing while it reads a watch (no Kubernetes client
        pipelines requests), so its socket turning readable means it closed, or is closing, it. One
        thread polls them all.
        """
        while not self.stopping.wait(poll_seconds):
            watching = {s.sock.fileno(): s for s in self.sessions() if s.watching}
            poller = select.poll()
            for fd in watching:
                if fd >= 0:  # -1: closed meanwhile
                    poller.register(fd, select.POLLIN | select.POLLPRI)
            for fd, _ in poller.poll(0):
                watching[fd].cut_watch(abruptly=True)

    def abort_sessions(self) -> None:
        for session in self.sessions():
            session.abort()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up or fails its handshake is ordinary; anything else is a bug to show.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)
