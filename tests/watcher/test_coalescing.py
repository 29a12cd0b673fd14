"""Coalescing: a quiet service's first event at once, then one signal per burst, the start verdict of
the service's latest event, and no signal lost when Temporal refuses one."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from llmisvc_cache.model import SeenVersion
from llmisvc_core.models.kube import LLMISVC
from llmisvc_watcher.coalescing import MAX_REASONS, SignalCoalescer, _Pending
from llmisvc_watcher.model import Affected, ServiceSignal, Tuning
from workflows.models import MAX_SEEN

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


def _claimant(i: int) -> tuple[str, SeenVersion]:
    seen = SeenVersion(resource=str(LLMISVC), namespace="ns", name=f"svc-{i}", resource_version=str(100 + i))
    return f"LLMInferenceService ns/svc-{i} created", seen


def test_a_burst_of_claimants_keeps_what_the_signal_carries_and_no_more():
    """Issue 21: 3,004 services claiming one model name each held every other's reason and version, 2.5 GiB
    in the watcher; a pending signal keeps the first reasons and the newest versions the workflow keeps."""
    pending = _Pending(due=0.0)
    for i in range(3000):
        reason, seen = _claimant(i)
        pending.add(reason, None, seen)
    assert len(pending.reasons) == MAX_REASONS
    assert pending.more == 3000 - MAX_REASONS
    assert [s.name for s in pending.seen.values()] == [f"svc-{i}" for i in range(3000 - MAX_SEEN, 3000)]
    signal = pending.signal(("ns", "a"))
    assert signal.reason.endswith(f"; LLMInferenceService ns/svc-7 created; and {3000 - MAX_REASONS} more")
    assert len(signal.seen) == MAX_SEEN


def test_an_object_seen_again_is_kept_as_the_newest():
    """The trim drops what was seen longest ago: a service's own change, seen again after a burst of
    claimants, keeps its place in the signal."""
    pending = _Pending(due=0.0)
    own = SeenVersion(resource=str(LLMISVC), namespace="ns", name="a", resource_version="1")
    pending.add("LLMInferenceService ns/a modified", True, own)
    for i in range(MAX_SEEN):
        reason, seen = _claimant(i)
        pending.add(reason, None, seen)
    again = own.model_copy(update={"resource_version": "9999"})
    pending.add("LLMInferenceService ns/a modified", True, again)
    reason, seen = _claimant(MAX_SEEN)
    pending.add(reason, None, seen)
    kept = list(pending.seen.values())
    assert len(kept) == MAX_SEEN and again in kept and _claimant(0)[1] not in kept


def test_a_failed_signal_merged_into_a_new_one_stays_bounded():
    older, newer = _Pending(due=0.0), _Pending(due=0.0)
    for i in range(200):
        reason, seen = _claimant(i)
        (older if i < 100 else newer).add(reason, None, seen)
    newer.merge_older(older)
    assert list(newer.reasons) == [_claimant(i)[0] for i in range(MAX_REASONS)]
    assert newer.more == 200 - MAX_REASONS
    assert [s.name for s in newer.seen.values()] == [f"svc-{i}" for i in range(200 - MAX_SEEN, 200)]


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


@dataclass
class ClockedSignaller:
    """Records when each signal went out (loop time)."""

    sent: list[tuple[float, str]] = field(default_factory=list)

    async def send(self, signal: ServiceSignal) -> None:
        self.sent.append((asyncio.get_running_loop().time(), signal.reason))


async def wait_for_signals(signaller: ClockedSignaller, count: int, limit: float = 5.0) -> None:
    async with asyncio.timeout(limit):
        while len(signaller.sent) < count:
            await asyncio.sleep(0.005)


async def test_the_first_event_of_a_quiet_service_is_sent_at_once():
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(debounce_seconds=5.0))
    began = asyncio.get_running_loop().time()
    coalescer.add(Affected("ns", "a", "HTTPRoute ns/r modified"))
    await wait_for_signals(signaller, 1)
    assert signaller.sent[0][0] - began < 0.5  # not the 5 s window
    await coalescer.drain(1.0)


async def test_a_burst_is_one_signal_at_once_then_one_at_the_end_of_the_window():
    window = 0.4
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(debounce_seconds=window))
    coalescer.add(Affected("ns", "a", "first"))
    await wait_for_signals(signaller, 1)
    opened = signaller.sent[0][0]
    for reason in ("second", "third", "second"):
        coalescer.add(Affected("ns", "a", reason))
        await asyncio.sleep(0.05)
    await wait_for_signals(signaller, 2)
    await asyncio.sleep(window)  # nothing more comes of the burst
    assert [reason for _, reason in signaller.sent] == ["first", "second; third"]
    assert signaller.sent[1][0] - opened >= window - 0.01
    await coalescer.drain(1.0)


async def test_a_service_that_fell_quiet_again_is_sent_at_once_again():
    window = 1.0
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(debounce_seconds=window))
    coalescer.add(Affected("ns", "a", "one"))
    await wait_for_signals(signaller, 1)
    await asyncio.sleep(window + 0.1)
    asked = asyncio.get_running_loop().time()
    coalescer.add(Affected("ns", "a", "two"))
    await wait_for_signals(signaller, 2)
    assert signaller.sent[1][0] - asked < window / 2  # not held for a window
    await coalescer.drain(1.0)


async def test_a_burst_on_one_service_does_not_delay_another():
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(debounce_seconds=5.0))
    coalescer.add(Affected("ns", "busy", "one"))
    await wait_for_signals(signaller, 1)
    coalescer.add(Affected("ns", "busy", "two"))  # waits for the end of busy's window
    asked = asyncio.get_running_loop().time()
    coalescer.add(Affected("ns", "quiet", "three"))
    await wait_for_signals(signaller, 2)
    assert signaller.sent[1][1] == "three"
    assert signaller.sent[1][0] - asked < 0.5
    await coalescer.drain(1.0)


# --- held reasons: another service's change that can only change the ModelNameCollision Warning --------
# A product decision beyond KServe (which checks collisions only on the service's own pass, router.go
# reconcileHTTPRoutes at aaac4e294): the claimants are told, but a burst of creations sharing one model
# name is one signal per claimant, not one per creation (issue 21: 304 claimants ran 7.0 passes each).


def held(name: str, reason: str) -> Affected:
    return Affected("ns", name, reason, held=True)


async def test_held_reasons_wait_for_the_quiet_period_and_go_out_as_one_signal():
    quiet = 0.3
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(hold_quiet_seconds=quiet, hold_max_seconds=30))
    began = asyncio.get_running_loop().time()
    for reason in ("b created", "c created", "d created"):
        await asyncio.sleep(quiet / 3)  # each one restarts the quiet period
        coalescer.add(held("a", reason))
    last = asyncio.get_running_loop().time()
    await wait_for_signals(signaller, 1)
    await asyncio.sleep(quiet)
    assert [reason for _, reason in signaller.sent] == ["b created; c created; d created"]
    assert signaller.sent[0][0] - last >= quiet - 0.01
    assert signaller.sent[0][0] - began < quiet * 3  # not held for the cap
    await coalescer.drain(1.0)


async def test_a_steady_stream_of_held_reasons_goes_out_at_the_cap():
    cap = 0.6
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(hold_quiet_seconds=0.2, hold_max_seconds=cap))
    began = asyncio.get_running_loop().time()
    i = 0
    while not signaller.sent:
        coalescer.add(held("a", f"s{i} created"))
        i += 1
        await asyncio.sleep(0.05)  # never quiet for 0.2 s
        assert asyncio.get_running_loop().time() - began < 3, "the stream held the signal past the cap"
    assert cap - 0.01 <= signaller.sent[0][0] - began < cap + 0.3
    await coalescer.drain(1.0)


async def test_any_other_reason_sends_the_held_ones_with_it_at_once():
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(hold_quiet_seconds=10, hold_max_seconds=30))
    coalescer.add(held("a", "b created"))
    await asyncio.sleep(0.05)
    asked = asyncio.get_running_loop().time()
    coalescer.add(Affected("ns", "a", "HTTPRoute ns/r modified"))
    await wait_for_signals(signaller, 1)
    assert signaller.sent == [(signaller.sent[0][0], "b created; HTTPRoute ns/r modified")]
    assert signaller.sent[0][0] - asked < 0.5
    await coalescer.drain(1.0)


async def test_a_held_reason_does_not_delay_a_signal_already_due():
    signaller = ClockedSignaller()
    coalescer = SignalCoalescer(signaller, Tuning(debounce_seconds=0.3, hold_quiet_seconds=10))
    coalescer.add(Affected("ns", "a", "one"))
    await wait_for_signals(signaller, 1)
    coalescer.add(Affected("ns", "a", "two"))  # waits for the end of the 0.3 s window
    coalescer.add(held("a", "b created"))
    await wait_for_signals(signaller, 2, limit=2.0)
    assert signaller.sent[1][1] == "two; b created"
    assert signaller.sent[1][0] - signaller.sent[0][0] < 1.0
    await coalescer.drain(1.0)


async def test_drain_sends_held_reasons_at_once():
    signaller = FlakySignaller()
    coalescer = SignalCoalescer(signaller, Tuning(hold_quiet_seconds=30, hold_max_seconds=60))
    coalescer.add(held("a", "b created"))
    await asyncio.wait_for(coalescer.drain(1.0), 2)
    assert [s.reason for s in signaller.sent] == ["b created"]


async def test_a_held_signal_that_failed_is_retried_with_the_backoff_not_held_again():
    signaller = FlakySignaller(down=True)
    tuning = Tuning(hold_quiet_seconds=0.1, hold_max_seconds=0.2, backoff_first=0.05)
    coalescer = SignalCoalescer(signaller, tuning)
    coalescer.add(held("a", "b created"))
    while signaller.attempts < 1:
        await asyncio.sleep(0.01)
    signaller.down = False
    coalescer.add(held("a", "c created"))  # merged into the retry, which is due within its backoff
    async with asyncio.timeout(2):
        while not signaller.sent:
            await asyncio.sleep(0.01)
    assert [s.reason for s in signaller.sent] == ["b created; c created"]
    await coalescer.drain(1.0)
