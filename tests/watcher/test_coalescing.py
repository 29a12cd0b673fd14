"""Coalescing: one signal per service per burst, the start verdict of the service's latest event, and
no signal lost when Temporal refuses one."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from watcher.coalescing import MAX_REASONS, SignalCoalescer
from watcher.model import Affected, ServiceSignal, Tuning

TUNING = Tuning(debounce_seconds=0.05, backoff_first=0.01)


@dataclass
class FlakySignaller:
    down: bool = False
    sent: list[ServiceSignal] = field(default_factory=list)
    attempts: int = 0

    async def send(self, signal: ServiceSignal) -> None:
        self.attempts += 1
        if self.down:
            raise RuntimeError("temporal is down")
        self.sent.append(signal)


async def settle(coalescer: SignalCoalescer) -> None:
    await asyncio.sleep(0.3)
    await coalescer.drain(1.0)


async def test_events_within_the_window_make_one_signal_with_every_reason_once():
    signaller = FlakySignaller()
    coalescer = SignalCoalescer(signaller, TUNING)
    for reason in ("Gateway kserve/gw modified", "HTTPRoute ns/r modified", "Gateway kserve/gw modified"):
        coalescer.add(Affected("ns", "a", reason))
    coalescer.add(Affected("ns", "b", "Gateway kserve/gw modified"))
    await settle(coalescer)
    assert sorted(signaller.sent, key=lambda s: s.name) == [
        ServiceSignal("ns", "a", "Gateway kserve/gw modified; HTTPRoute ns/r modified", start=False),
        ServiceSignal("ns", "b", "Gateway kserve/gw modified", start=False),
    ]


async def test_events_after_the_window_make_another_signal():
    signaller = FlakySignaller()
    coalescer = SignalCoalescer(signaller, TUNING)
    coalescer.add(Affected("ns", "a", "one"))
    await asyncio.sleep(0.2)
    coalescer.add(Affected("ns", "a", "two"))
    await settle(coalescer)
    assert [s.reason for s in signaller.sent] == ["one", "two"]


async def test_the_services_latest_own_event_decides_whether_to_start():
    signaller = FlakySignaller()
    coalescer = SignalCoalescer(signaller, TUNING)
    coalescer.add(Affected("ns", "created-then-deleted", "created"), start=True)
    coalescer.add(Affected("ns", "created-then-deleted", "deleted"), start=False)
    coalescer.add(Affected("ns", "modified", "modified"), start=True)
    coalescer.add(Affected("ns", "modified", "Gateway kserve/gw modified"))
    await settle(coalescer)
    assert {s.name: s.start for s in signaller.sent} == {"created-then-deleted": False, "modified": True}


async def test_a_long_list_of_reasons_is_counted_not_spelled_out():
    signaller = FlakySignaller()
    coalescer = SignalCoalescer(signaller, TUNING)
    for i in range(MAX_REASONS + 3):
        coalescer.add(Affected("ns", "a", f"r{i}"))
    await settle(coalescer)
    assert signaller.sent[0].reason.endswith("; r7; and 3 more")


async def test_a_failed_signal_is_retried_and_merged_with_later_events():
    signaller = FlakySignaller(down=True)
    coalescer = SignalCoalescer(signaller, TUNING)
    coalescer.add(Affected("ns", "a", "first"), start=True)
    while signaller.attempts < 2:
        await asyncio.sleep(0.01)
    coalescer.add(Affected("ns", "a", "second"))
    signaller.down = False
    await settle(coalescer)
    assert signaller.sent == [ServiceSignal("ns", "a", "first; second", start=True)]


async def test_drain_sends_what_is_pending_at_once():
    signaller = FlakySignaller()
    coalescer = SignalCoalescer(signaller, Tuning(debounce_seconds=30))
    coalescer.add(Affected("ns", "a", "late"))
    await asyncio.wait_for(coalescer.drain(1.0), 2)
    assert [s.reason for s in signaller.sent] == ["late"]
