"""``llmisvc-router status -o yaml|json``: one document in either format, with the keys docs/operations.md
lists ("Status output") always present; a bad ``-o`` is refused before anything connects."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from llmisvc_router import output
from tests.cli.test_command_line import cli
from workflows.models import PassSummary, WorkflowState

DOCS = Path(__file__).parents[2] / "docs/operations.md"
SERVICE = "llm/opt"
STATES = {
    "new": WorkflowState(),
    "after-a-pass": WorkflowState(
        uid="0b5c",
        pass_count=3,
        last=PassSummary(
            outcome="reconciled",
            router_ready="True",
            conditions={"RouterReady": "True"},
            url="http://gw/llm/opt",
            writes=2,
            finished_at=datetime(2026, 1, 1, tzinfo=UTC),
        ),
        pending_reasons=["HTTPRoute llm/opt-kserve-route modified"],
    ),
}


def documented_keys() -> list[str]:
    """The keys of the table under "## Status output", in order."""
    section = DOCS.read_text().split("\n## Status output\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE)


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_the_status_document_has_exactly_the_documented_keys_in_their_order(state: WorkflowState) -> None:
    document = output.status_document(SERVICE, state)
    assert list(document) == documented_keys()
    assert document["format"] == output.STATUS_FORMAT and document["service"] == SERVICE


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_yaml_and_json_carry_the_same_document(state: WorkflowState) -> None:
    document = output.status_document(SERVICE, state)
    assert yaml.safe_load(output.render(document, "yaml")) == document
    assert json.loads(output.render(document, "json")) == document


def test_unknown_values_are_null_not_left_out() -> None:
    document = json.loads(output.render(output.status_document(SERVICE, WorkflowState()), "json"))
    assert document["last"] is None and document["last_error"] is None and document["drift"] is None


def test_a_long_message_stays_on_one_yaml_line() -> None:
    state = WorkflowState(last_error="InvalidLLMInferenceService: " + "x" * 300)
    rendered = output.render(output.status_document(SERVICE, state), "yaml")
    [line] = [line for line in rendered.splitlines() if line.startswith("last_error:")]
    assert "x" * 300 in line


@pytest.mark.parametrize("command", ["status", "drift"])
def test_an_unknown_output_format_exits_2_before_connecting(command: str) -> None:
    done = cli(command, SERVICE, "-o", "xml")  # no kubeconfig, no Temporal: nothing is reached
    assert done.returncode == 2
    assert done.stderr.strip() == f"llmisvc-router {command}: -o xml: expected yaml or json"
