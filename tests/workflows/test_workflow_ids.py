"""The one workflow-id format (``workflows.models.workflow_id``): the unnamed form of installs without a
cluster name, the cluster form of those with one, and the parse that tells them apart."""

from __future__ import annotations

import pytest

from workflows.models import ServiceWorkflowId, check_cluster_name, parse_workflow_id, workflow_id


@pytest.mark.parametrize(
    ("cluster", "expected"),
    [
        pytest.param("", "llmisvc/llm/opt", id="no-cluster-name-keeps-the-old-ids"),
        pytest.param("eu-1", "llmisvc/eu-1/llm/opt", id="cluster-name-after-the-prefix"),
        pytest.param("llm", "llmisvc/llm/llm/opt", id="cluster-named-like-the-namespace"),
    ],
)
def test_the_id_carries_the_cluster_name_when_there_is_one(cluster: str, expected: str) -> None:
    assert workflow_id("llm", "opt", cluster) == expected
    assert parse_workflow_id(expected) == ServiceWorkflowId(cluster, "llm", "opt")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("fan-out-1234", id="another-workflow"),
        pytest.param("llmisvc/llm", id="too-few-parts"),
        pytest.param("llmisvc/a/b/c/d", id="too-many-parts"),
        pytest.param("llmisvc//opt", id="an-empty-part"),
        pytest.param("llmisvc/EU/llm/opt", id="a-cluster-name-that-is-no-label"),
        pytest.param("other/llm/opt", id="another-prefix"),
    ],
)
def test_an_id_the_router_does_not_make_parses_to_none(text: str) -> None:
    assert parse_workflow_id(text) is None


@pytest.mark.parametrize("name", ["", "eu-1", "a", "a" * 63, " b2 "])
def test_a_cluster_name_is_empty_or_a_dns_label(name: str) -> None:
    assert check_cluster_name(name) == name.strip()


@pytest.mark.parametrize("name", ["EU", "eu_1", "-eu", "eu-", "a" * 64, "eu/1", "eu.1"])
def test_anything_else_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a DNS-1123 label"):
        check_cluster_name(name)
