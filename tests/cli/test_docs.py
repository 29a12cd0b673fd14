"""The README says what a person will see: every outcome a pass can end with, and the exit statuses."""

from __future__ import annotations

from pathlib import Path

from llmisvc_core.planner.plan import Outcome
from llmisvc_runtime import exit_codes

ROOT = Path(__file__).resolve().parents[2]
#: Outcomes of the live workflow that ``plan`` cannot produce.
WORKFLOW_OUTCOMES = ("error", "gone", "handed-off")


def test_the_readme_names_every_outcome_of_a_pass() -> None:
    readme = (ROOT / "README.md").read_text()
    for outcome in [*(o.value for o in Outcome), *WORKFLOW_OUTCOMES]:
        assert f"`{outcome}`" in readme or f"{outcome} |" in readme or f"| {outcome}" in readme, outcome


def test_the_readme_lists_the_exit_statuses() -> None:
    readme = (ROOT / "README.md").read_text()
    for code in (exit_codes.FAILED, exit_codes.USAGE, exit_codes.NOT_FOUND, exit_codes.UNAVAILABLE):
        assert f"**{code}**" in readme, code
