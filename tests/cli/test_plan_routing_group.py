"""``plan --all`` on ``examples/routing-group.yaml``: a routing group of four services in one state file
(KServe #5798/#5847; ``controller_int_router_group_test.go`` "Group formation", "Force-stop grouped
member", "Model name divergence"), and ``--name`` picking one of them."""

from __future__ import annotations

import functools
from typing import Any

import yaml

from tests.cli.test_plan_command import ROOT, plan

EXAMPLE = str(ROOT / "examples" / "routing-group.yaml")


@functools.cache  # one subprocess for the module: the documents are only read
def _documents() -> dict[str, dict[str, Any]]:
    result = plan("-f", EXAMPLE, "--all")
    assert result.returncode == 0, result.stderr
    return {d.pop("service"): d for d in yaml.safe_load_all(result.stdout)}


def _shared_backends(doc: dict[str, Any]) -> list[tuple[str, int]]:
    route = next(o for o in doc["apply"] if o["kind"] == "HTTPRoute")
    shared = next(r for r in route["spec"]["rules"] if r["matches"][0]["path"]["value"] == "/v1")
    return [(r["name"], r["weight"]) for r in shared["backendRefs"]]


def _condition(doc: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in doc["status"]["conditions"] if c["type"] == type_), None)


def test_plan_all_gives_one_document_per_service_in_name_order() -> None:
    assert list(_documents()) == [
        "llm/llama-canary",
        "llm/llama-paused",
        "llm/llama-stable",
        "llm/mistral-trial",
    ]


def test_matching_routable_members_share_the_weighted_backends_and_the_stopped_one_is_left_out() -> None:
    docs = _documents()
    weighted = [("llama-canary-kserve-workload-svc", 10), ("llama-stable-kserve-workload-svc", 90)]
    assert _shared_backends(docs["llm/llama-stable"]) == weighted
    assert _shared_backends(docs["llm/llama-canary"]) == weighted
    members = docs["llm/llama-stable"]["status"]["router"]["group"]["members"]
    assert [(m["name"], m["weight"], m.get("stopped", False)) for m in members] == [
        ("llama-canary", 10, False),
        ("llama-paused", 5, True),
        ("llama-stable", 90, False),
    ]


def test_per_participant_rules_keep_their_own_backend() -> None:
    route = next(o for o in _documents()["llm/llama-canary"]["apply"] if o["kind"] == "HTTPRoute")
    own = route["spec"]["rules"][0]
    assert own["matches"][0]["path"]["value"] == "/llm/llama-canary"
    assert [r["name"] for r in own["backendRefs"]] == ["llama-canary-kserve-workload-svc"]


def test_every_grouped_route_carries_the_routing_group_label() -> None:
    for doc in _documents().values():
        for route in (o for o in doc["apply"] if o["kind"] == "HTTPRoute"):
            assert route["metadata"]["labels"]["serving.kserve.io/routing-group"] == "llama"


def test_the_divergent_member_routes_alone_and_every_active_member_reports_the_divergence() -> None:
    docs = _documents()
    assert _shared_backends(docs["llm/mistral-trial"]) == [("mistral-trial-kserve-workload-svc", 20)]
    for name in ("llm/llama-stable", "llm/llama-canary", "llm/mistral-trial"):
        degraded = _condition(docs[name], "GroupDegraded")
        assert degraded is not None and degraded["reason"] == "MemberDivergence"
        assert _condition(docs[name], "GroupReady") is not None


def test_the_stopped_member_has_no_group_conditions_or_status() -> None:
    paused = _documents()["llm/llama-paused"]
    assert _condition(paused, "GroupReady") is None
    assert "router" not in paused["status"]


def test_name_plans_one_member_as_all_does() -> None:
    result = plan("-f", EXAMPLE, "--name", "llm/llama-canary")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == _documents()["llm/llama-canary"]


def test_all_and_name_together_is_a_usage_error() -> None:
    result = plan("-f", EXAMPLE, "--all", "--name", "llm/llama-canary")
    assert result.returncode == 2
