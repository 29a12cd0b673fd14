"""Every committed history replays through the production replayer (``worker.factory.build_replayer``).

A failure here means a change to the workflow code is not deterministic for runs already in flight:
version the change (``workflow.patched``) instead of recording the histories again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from worker.factory import build_replayer

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_histories_are_committed() -> None:
    assert {p.stem for p in HISTORIES} >= {
        "first_pass",
        "noop_resync",
        "stop_resume",
        "conflict_restart",
        "gone",
        "shadow",
        "handed_off",
        "rendered_rejected",
        "model_name_collision",
        "invalid_spec",
        "rollout_paused_and_resumed",
        "rollout_rolled_back",
    }


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays_without_nondeterminism(path: Path) -> None:
    history = WorkflowHistory.from_json(f"replay-{path.stem}", path.read_text(encoding="utf-8"))

    result = await build_replayer().replay_workflow(history)

    assert result.replay_failure is None
