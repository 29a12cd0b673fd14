"""Coalescing: a burst of events about one service becomes one signal carrying every reason.

The first event of a quiet service goes out at once: debouncing it would only add latency to the common
case of a single change. Sending opens a window (``Tuning.debounce_seconds``): events for the same service
that arrive within it wait for its end and go out together as one signal, so a burst costs at most two
passes however long it is (the events of one loop turn, e.g. several rules naming the service, always
travel together). Whether the signal starts the workflow follows
the service's own latest event (created or modified: start; deleted: plain signal); events on other
objects never start a workflow. A signal that fails to go out is put back and retried with a capped
backoff, merged with whatever arrived meanwhile, so a Temporal outage delays signals but loses none.

A held reason (``Affected.held``: another service's change that can only change this one's
``ModelNameCollision`` Warning) is not urgent: while a service has only held reasons pending, its signal
waits until none has come for ``Tuning.hold_quiet_seconds``, and at most ``Tuning.hold_max_seconds`` after
the first. Any other reason sends it as above, held reasons and all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from llmisvc_cache.model import SeenVersion
from llmisvc_watcher.model import Affected, ServiceSignal, Tuning
from llmisvc_watcher.signaller import Signaller
from workflows.models import MAX_SEEN

log = logging.getLogger(__name__)

MAX_REASONS = 8  # the rest are counted, so a CRD event over a thousand objects stays a short signal
RETRY_CAP = 30.0

Key = tuple[str, str]


@dataclass
class _Pending:
    """One service's signal in the making. What it keeps is bounded whatever the burst: the first
    :data:`MAX_REASONS` reasons (the rest counted) and the newest :data:`MAX_SEEN` versions, all that the
    signal carries or the workflow keeps. Kept whole, 3,004 services claiming one model name held every
    other claimant's reason and version each, 2.5 GiB in the watcher (issue 21)."""

    due: float  # loop time to send at
    reasons: dict[str, None] = field(default_factory=dict)  # ordered set, at most MAX_REASONS
    more: int = 0  # reasons past MAX_REASONS, counted (a repeat of one of them counts again)
    start: bool | None = None  # None: no event on the service itself in this window
    attempt: int = 0
    seen: dict[tuple[str, str, str], SeenVersion] = field(default_factory=dict)  # newest per object
    held_since: float | None = None  # loop time of the first held reason, while only held ones wait
    moved: asyncio.Event = field(default_factory=asyncio.Event)  # ``due`` changed (or shutdown): look again

    def add(self, reason: str, start: bool | None, seen: SeenVersion | None = None) -> None:
        self._note(reason)
        if start is not None:
            self.start = start
        if seen is not None:
            self._see(seen)
            self._trim_seen()

    def _see(self, seen: SeenVersion) -> None:
        """The newest version of an object, last in line: the trim drops the objects seen longest ago."""
        key = (seen.resource, seen.namespace, seen.name)
        self.seen.pop(key, None)
        self.seen[key] = seen

    def _note(self, reason: str) -> None:
        if reason in self.reasons:
            return
        if len(self.reasons) < MAX_REASONS:
            self.reasons[reason] = None
        else:
            self.more += 1

    def _trim_seen(self) -> None:
        """The workflow keeps the newest :data:`MAX_SEEN` (``ReconcileSignal.seen``); so does the signal."""
        while len(self.seen) > MAX_SEEN:
            del self.seen[next(iter(self.seen))]

    def merge_older(self, older: _Pending) -> None:
        """Fold in a signal that failed: its reasons first; a newer start/delete verdict wins."""
        newer, self.reasons = self.reasons, dict(older.reasons)
        self.more += older.more
        for reason in newer:
            self._note(reason)
        newer_seen, self.seen = self.seen, dict(older.seen)
        for seen in newer_seen.values():
            self._see(seen)
        self._trim_seen()
        self.start = older.start if self.start is None else self.start
        self.attempt = max(self.attempt, older.attempt)
        self.held_since = None  # a retry is not held back again

    def move(self, due: float) -> None:
        if due != self.due:
            self.due = due
            self.moved.set()

    def signal(self, key: Key) -> ServiceSignal:
        text = "; ".join(self.reasons)
        if self.more:
            text += f"; and {self.more} more"
        return ServiceSignal(
            namespace=key[0], name=key[1], reason=text, start=bool(self.start), seen=tuple(self.seen.values())
        )


class SignalCoalescer:
    def __init__(self, signaller: Signaller, tuning: Tuning) -> None:
        self._signaller = signaller
        self._tuning = tuning
        self._pending: dict[Key, _Pending] = {}
        self._last_sent: dict[Key, float] = {}  # loop time of the latest signal, within its window only
        self._tasks: set[asyncio.Task[None]] = set()
        self._limit = asyncio.Semaphore(tuning.send_concurrency)
        self._closing = False

    def add(self, affected: Affected, start: bool | None = None, seen: SeenVersion | None = None) -> None:
        """Queue a signal for one service; ``start`` is the verdict of an event on the service itself,
        ``seen`` the version of the object the event was about."""
        key = (affected.namespace, affected.name)
        now = asyncio.get_running_loop().time()
        pending = self._pending.get(key)
        if pending is None:
            held_since = now if affected.held else None
            pending = self._pending[key] = _Pending(self._due(key, held_since, now), held_since=held_since)
            self._schedule(key)
        elif pending.held_since is not None:
            if not affected.held:
                pending.held_since = None
                pending.move(min(pending.due, self._due(key, None, now)))
            else:  # another held reason: the quiet period restarts
                pending.move(self._due(key, pending.held_since, now))
        pending.add(affected.reason, start, seen)

    def _due(self, key: Key, held_since: float | None, now: float) -> float:
        """When to send: for held reasons only (the first came at ``held_since``), after the quiet period
        within the cap; else at once for a quiet service, or at the end of the window after its latest
        signal for one in a burst."""
        if held_since is not None:
            tuning = self._tuning
            return min(held_since + tuning.hold_max_seconds, now + tuning.hold_quiet_seconds)
        last = self._last_sent.get(key)
        return now if last is None else max(now, last + self._tuning.debounce_seconds)

    def _opened_window(self, key: Key) -> None:
        loop = asyncio.get_running_loop()
        stamp = self._last_sent[key] = loop.time()
        # Forgotten when the window closes, so the map holds only services signalled just now.
        loop.call_later(self._tuning.debounce_seconds, self._close_window, key, stamp)

    def _close_window(self, key: Key, stamp: float) -> None:
        if self._last_sent.get(key) == stamp:
            del self._last_sent[key]

    async def drain(self, timeout: float) -> None:
        """Send everything pending now (no more retries) and wait up to ``timeout`` for it to go out."""
        self._closing = True
        for pending in self._pending.values():
            pending.moved.set()
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=timeout)
            for task in late:
                task.cancel()
            if late:
                log.warning("%d signals were not sent before shutdown", len(late))

    def _schedule(self, key: Key) -> None:
        task = asyncio.create_task(self._send_later(key), name=f"signal {key[0]}/{key[1]}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_later(self, key: Key) -> None:
        loop = asyncio.get_running_loop()
        pending = self._pending[key]
        while not self._closing and (delay := pending.due - loop.time()) > 0:
            pending.moved.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pending.moved.wait(), delay)
        self._pending.pop(key)
        self._opened_window(key)
        signal = pending.signal(key)
        try:
            async with self._limit:
                await self._signaller.send(signal)
        except Exception as err:  # whatever the client raised, the signal must not be lost
            self._retry(key, pending, err)

    def _retry(self, key: Key, failed: _Pending, err: Exception) -> None:
        failed.attempt += 1
        if self._closing:
            log.warning("signal to %s/%s not sent at shutdown: %s", key[0], key[1], err)
            return
        delay = min(RETRY_CAP, self._tuning.backoff_first * 2 ** (failed.attempt - 1))
        log.warning("signal to %s/%s failed (%s); retrying in %.1fs", key[0], key[1], err, delay)
        newer = self._pending.get(key)
        retry_at = asyncio.get_running_loop().time() + delay
        if newer is not None:
            newer.merge_older(failed)  # its own send is already scheduled, no later than the retry's
            newer.move(min(newer.due, retry_at))
        else:
            failed.held_since = None
            failed.due = retry_at
            self._pending[key] = failed
            self._schedule(key)
