"""``llmisvc-router rollout``'s plan from flags and ``-f`` (issue 22), refused before anything connects
with one line naming the field and exit status 2, and its ``--help``. The commands against a running
rollout are exercised end to end in ``tests/integration/test_rollout.py``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from llmisvc_core.rollout.plan import RolloutPlan
from llmisvc_router import rollout_command, rollout_help
from llmisvc_router.cli import build_parser
from llmisvc_router.errors import CommandError
from tests.cli.test_command_line import cli

START = ["rollout", "start", "llm/llama", "--stable", "v1", "--candidate", "v2"]


def parsed(*args: str) -> argparse.Namespace:
    return build_parser([*START, *args]).parse_args([*START, *args])


def test_rollout_plan_from_flags() -> None:
    plan = rollout_command.build_plan(parsed("--steps", "10,50,100", "--dwell", "5m", "--rollback", "stable"))
    assert [(s.weight, s.dwell_seconds) for s in plan.steps] == [(10, 300), (50, 300), (100, 300)]
    assert plan.rollback == "stable"


def test_rollout_plan_file_and_flags_override_it(tmp_path: Path) -> None:
    file = tmp_path / "plan.yaml"
    file.write_text(
        "steps: [{weight: 20, dwell_seconds: 30}, {weight: 100, dwell_seconds: 0}]\n"
        "gate_timeout_seconds: 60\n"
        "prometheus: {url: 'http://prom:9090', query: 'errors', threshold: 0.1}\n"
    )
    plan = rollout_command.build_plan(parsed("-f", str(file), "--threshold", "0.02", "--gate-timeout", "2m"))
    assert [(s.weight, s.dwell_seconds) for s in plan.steps] == [(20, 30), (100, 0)]
    assert plan.gate_timeout_seconds == 120
    assert plan.prometheus is not None
    assert (plan.prometheus.query, plan.prometheus.threshold) == ("errors", 0.02)


@pytest.mark.parametrize(
    ("args", "file_text", "error"),
    [
        pytest.param([], None, "--steps: required (or -f PLAN.yaml with steps)", id="no_steps"),
        pytest.param(
            ["--steps", "10,5,100"],
            None,
            "rollout plan: steps.1.weight: 5 is not above the previous step's 10",
            id="steps_climb",
        ),
        pytest.param(
            ["--steps", "10,100", "--query", "errors", "--threshold", "1"],
            None,
            "rollout plan: prometheus.url: Field required",
            id="query_needs_a_url",
        ),
        pytest.param(
            [],
            "steps: [{weight: 100, dwell: 5}]\n",
            "{file}: steps.0.dwell: Extra inputs are not permitted",
            id="file_field_named",
        ),
        pytest.param([], "- 10\n- 100\n", "{file}: expected a mapping (steps: …)", id="file_not_a_mapping"),
        pytest.param(
            ["--dwell", "1m"],
            "steps: [{weight: 100}]\n",
            "--dwell: give --steps too (the file's steps have their own dwell_seconds)",
            id="dwell_without_steps",
        ),
    ],
)
def test_rollout_plan_refused(tmp_path: Path, args: list[str], file_text: str | None, error: str) -> None:
    file = tmp_path / "plan.yaml"
    if file_text is not None:
        file.write_text(file_text)
        args = ["-f", str(file), *args]
    with pytest.raises(CommandError) as raised:
        rollout_command.build_plan(parsed(*args))
    assert str(raised.value) == error.format(file=file)
    assert raised.value.code == 2


def test_rollout_start_refuses_a_bad_plan_before_connecting() -> None:
    """No Temporal and no cluster are reachable here: the plan is refused first, exit status 2."""
    done = cli(
        *START, "--steps", "10,50", env={"TEMPORAL_ADDRESS": "127.0.0.1:1", "KUBECONFIG": "/nonexistent"}
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == "llmisvc-router rollout: rollout plan: steps.1.weight: the last step must be 100, not 50\n"
    )


def test_rollout_help_names_every_action_and_the_plan_fields() -> None:
    done = cli("rollout", "--help")
    assert done.returncode == 0
    for action in rollout_help.ACTIONS:
        assert f"    {action} " in done.stdout
    start = cli("rollout", "start", "--help").stdout
    for field in RolloutPlan.model_fields:  # the plan file's fields, every one, as the model has them
        assert f"{field}:" in start, field
    assert "--steps 10,50,100 --dwell 5m" in start
