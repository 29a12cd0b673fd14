"""``plan --all`` on ``examples/model-name-collision.yaml``: two services of one namespace serve the same
model name and each plan lists the ``ModelNameCollision`` Warning naming the other (KServe #5800,
``router.go`` ``reconcileHTTPRoutes``, ``router_validation.go`` ``findModelNameCollisions``); the members
of a routing group (``examples/routing-group.yaml``) share a model name by design and plan none."""

from __future__ import annotations

from typing import Any

import yaml

from tests.cli.test_plan_command import ROOT, plan

EXAMPLE = str(ROOT / "examples" / "model-name-collision.yaml")


def _documents(example: str, *args: str) -> dict[str, dict[str, Any]]:
    result = plan("-f", example, *args)
    assert result.returncode == 0, result.stderr
    return {d.pop("service", ""): d for d in yaml.safe_load_all(result.stdout)}


def test_5800_each_colliding_service_plans_the_warning_naming_the_other() -> None:
    docs = _documents(EXAMPLE, "--all")
    assert list(docs) == ["llm/facebook-opt-125m", "llm/opt-125m-copy", "llm/qwen"]
    for name, other in (("facebook-opt-125m", "opt-125m-copy"), ("opt-125m-copy", "facebook-opt-125m")):
        (event,) = docs[f"llm/{name}"]["events"]
        assert (event["type"], event["reason"]) == ("Warning", "ModelNameCollision")
        assert event["note"].startswith(
            f'model name "facebook/opt-125m" is also served by {other} in namespace llm:'
        )
        assert f"its own path /llm/{name}." in event["note"]
        assert docs[f"llm/{name}"]["outcome"] == "reconciled"  # a warning, nothing else changes
    assert "events" not in docs["llm/qwen"]


def test_5800_the_warning_is_planned_for_one_service_picked_by_name() -> None:
    (doc,) = _documents(EXAMPLE, "--name", "llm/opt-125m-copy").values()
    assert [e["reason"] for e in doc["events"]] == ["ModelNameCollision"]


def test_5800_members_of_one_routing_group_plan_no_collision() -> None:
    docs = _documents(str(ROOT / "examples" / "routing-group.yaml"), "--all")
    assert len(docs) == 4
    assert [name for name, doc in docs.items() if "events" in doc] == []
