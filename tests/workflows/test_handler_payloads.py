"""No payload wedges the workflow: every signal, query and update of ``LLMInferenceServiceWorkflow``
takes a missing, empty, extra-field, wrong-typed, non-JSON or deeply nested payload (and any number of
them) without failing a workflow task; the workflow keeps answering queries and completing passes.

The payloads travel through a real Temporal server (the time-skipping test server) to the production
worker, as a ``temporal workflow signal`` or the UI's "Send Signal" would send them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.testing import WorkflowEnvironment

from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster
from workflows.models import ReconcileSignal
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

#: Seconds a message and the pass after it may take before the workflow counts as wedged.
WEDGED_AFTER = 10.0
HANDLERS = ("reconcile", "stop", "resume", "state", "reconcile_now")

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
_reconcile_like = st.fixed_dictionaries(
    {},
    optional={
        "reason": _json,
        "seen": _json | st.lists(st.dictionaries(st.sampled_from(["resource", "name", "x"]), _json)),
        "unknown": _json,
    },
)


def _raw(data: bytes, encoding: bytes = b"json/plain") -> RawValue:
    return RawValue(Payload(metadata={"encoding": encoding}, data=data))


def _nested(depth: int) -> RawValue:
    """``[[[…]]]`` or ``{"a": {"a": …}}``, ``depth`` levels, as JSON the client does not re-encode."""
    return _raw(b"[" * depth + b"]" * depth) if depth % 2 else _raw(b'{"a":' * depth + b"1" + b"}" * depth)


_raw_payloads = st.one_of(
    st.sampled_from([50, 199, 300, 601, 3000]).map(_nested),
    st.just(_raw(b"{not json")),
    st.just(_raw(b"")),
    st.just(_raw(b"\x00\xff", b"binary/plain")),
    st.just(_raw(b"x", b"no/such-encoding")),
    st.just(_raw(b"", b"binary/null")),
)
_payload = st.one_of(_json, _reconcile_like, _raw_payloads, st.just(["x"]), st.just("x"), st.just(42))


@dataclass(frozen=True)
class Message:
    handler: str
    args: list[Any]

    def __repr__(self) -> str:  # hypothesis prints the failing example: keep raw bytes readable
        shown = [f"raw({a.payload.data[:40]!r})" if isinstance(a, RawValue) else a for a in self.args]
        return f"{self.handler}{shown}"


messages = st.builds(Message, st.sampled_from(HANDLERS), st.lists(_payload, max_size=3))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def svc(env: WorkflowEnvironment) -> AsyncIterator[harness.Service]:
    """One workflow for the whole module: every fuzzed message lands on the same, growing history."""
    async with harness.running_service(env.client, FakeCluster(world.minimal_world())) as service:
        await service.passes(1)
        yield service


async def _send(svc: harness.Service, message: Message) -> None:
    handle, name, args = svc.handle, message.handler, message.args
    if name == "state":
        try:
            await handle.query(name, args=args)
        except WorkflowQueryFailedError as err:  # only a payload the converter cannot read at all
            assert any(isinstance(a, RawValue) for a in args), err
    elif name == "reconcile_now":
        try:
            await handle.execute_update(name, args=args)
        except WorkflowUpdateFailedError as err:  # rejected: by the validator or the SDK's conversion
            assert err.cause is not None and "\n" not in str(err.cause), err.cause
    else:
        await handle.signal(name, args=args)


async def _task_failures(svc: harness.Service) -> list[str]:
    history = await svc.handle.fetch_history()
    return [
        str(e.workflow_task_failed_event_attributes.failure.message)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(message=messages)
async def test_no_signal_query_or_update_payload_fails_a_workflow_task_or_stops_the_passes(
    svc: harness.Service, message: Message
) -> None:
    before = await svc.state()
    await asyncio.wait_for(_send(svc, message), WEDGED_AFTER)
    summary = await asyncio.wait_for(
        svc.handle.execute_update(
            LLMInferenceServiceWorkflow.reconcile_now, ReconcileSignal(reason="after a fuzzed message")
        ),
        WEDGED_AFTER,
    )
    after = await asyncio.wait_for(svc.state(), WEDGED_AFTER)

    assert summary.finished_at is not None
    assert after.pass_count > before.pass_count
    assert await _task_failures(svc) == [], f"a workflow task failed after {message!r}"


# -- the rules, one example each ------------------------------------------------------------------------


async def test_a_reconcile_signal_without_input_runs_a_pass_with_the_default_reason(
    svc: harness.Service,
) -> None:
    before = (await svc.state()).pass_count
    await svc.handle.signal("reconcile")
    state = await svc.until(lambda s: s.pass_count > before and not s.pending_reasons, "a pass")
    assert state.last is not None and state.last.finished_at is not None
    assert await _task_failures(svc) == []


async def test_a_reconcile_signal_of_the_wrong_shape_is_dropped_and_no_pass_runs_for_it(
    svc: harness.Service,
) -> None:
    await svc.passes((await svc.state()).pass_count)
    for args in (["x"], [{"reason": 42}], [{"seen": "all"}], [{"reason": "a"}, {"reason": "b"}]):
        await svc.handle.signal("reconcile", args=args)
    state = await svc.state()
    assert state.pending_reasons == []
    assert await _task_failures(svc) == []


async def test_a_reconcile_signal_with_unknown_fields_is_read_and_the_fields_ignored(
    svc: harness.Service,
) -> None:
    await svc.passes((await svc.state()).pass_count)
    before = (await svc.state()).pass_count
    await svc.handle.signal("reconcile", {"reason": "from a newer watcher", "priority": "high"})
    await svc.until(lambda s: s.pass_count > before and not s.pending_reasons, "a pass")


async def test_a_reconcile_now_update_of_the_wrong_shape_is_rejected_by_its_validator_with_one_line(
    svc: harness.Service,
) -> None:
    before = (await svc.state()).pass_count
    with pytest.raises(WorkflowUpdateFailedError) as rejected:
        await svc.handle.execute_update("reconcile_now", {"reason": ["not", "a", "string"]})
    message = str(rejected.value.cause)
    assert "reconcile_now: field reason: Input should be a valid string" in message
    assert "\n" not in message
    assert (await svc.state()).pass_count == before, "a rejected update runs no pass"


async def test_stop_and_resume_ignore_an_argument_and_still_act(svc: harness.Service) -> None:
    await svc.handle.signal("stop", args=[{"unexpected": True}, 3])
    await svc.until(lambda s: s.desired_stop is None and not s.pending_reasons, "the stop pass")
    await svc.handle.signal("resume", "please")
    state = await svc.until(lambda s: s.desired_stop is None and not s.pending_reasons, "the resume pass")
    assert state.last is not None and state.last.outcome == "reconciled"
    assert await _task_failures(svc) == []


async def test_the_state_query_ignores_arguments(svc: harness.Service) -> None:
    state = await svc.handle.query("state", args=[{"x": 1}, [], "y"])
    assert state["pass_count"] >= 1
