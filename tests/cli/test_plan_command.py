"""The ``plan`` command: its output contract on the shipped examples, and one-line errors on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
NOW = "2026-01-01T00:00:00Z"


def plan(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmisvc_router", "plan", "--now", NOW, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def _services_in(example: Path) -> int:
    return sum(
        1 for d in yaml.safe_load_all(example.read_text()) if d and d.get("kind") == "LLMInferenceService"
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_every_example_plans_to_one_document_per_service_with_the_contract_keys(example: Path) -> None:
    several = _services_in(example) > 1
    result = plan("-f", str(example), *(["--all"] if several else []))
    assert result.returncode == 0, result.stderr
    documents = list(yaml.safe_load_all(result.stdout))
    assert len(documents) == _services_in(example)
    for doc in documents:
        if several:
            assert doc.pop("service")
        _check_contract(doc)


def _check_contract(doc: dict[str, Any]) -> None:
    assert list(doc)[:4] == ["apply", "delete", "status", "outcome"]
    assert doc["outcome"] in {"reconciled", "precondition-not-met", "invalid-references", "failed"}
    assert ("message" in doc) == (doc["outcome"] == "failed")
    keys = [(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in doc["apply"]]
    assert keys == sorted(keys)
    refs = [(d["kind"], d.get("namespace", ""), d["name"]) for d in doc["delete"]]
    assert refs == sorted(refs)


def test_the_output_is_stable_across_runs() -> None:
    example = str(ROOT / "examples" / "minimal-presets.yaml")
    assert plan("-f", example).stdout == plan("-f", example).stdout


def test_stdin_is_read_with_dash() -> None:
    text = (ROOT / "examples" / "minimal-presets.yaml").read_text()
    assert (
        plan("-f", "-", stdin=text).stdout
        == plan("-f", str(ROOT / "examples" / "minimal-presets.yaml")).stdout
    )


def test_minimal_presets_example_creates_route_pools_and_epp_service() -> None:
    doc = yaml.safe_load(plan("-f", str(ROOT / "examples" / "minimal-presets.yaml")).stdout)
    assert [(o["kind"], o["metadata"]["name"]) for o in doc["apply"]] == [
        ("HTTPRoute", "facebook-opt-125m-kserve-route"),
        ("InferencePool", "facebook-opt-125m-inference-pool"),
        ("InferencePool", "facebook-opt-125m-inference-pool"),
        ("Service", "facebook-opt-125m-epp-service"),
    ]
    assert doc["outcome"] == "reconciled"


def test_5712_tokenizer_example_applies_the_tokenizer_preset_and_reads_its_deployment() -> None:
    """KServe #5712: ``kserve-config-llm-tokenizer`` right after the scheduler preset in appliedConfigs, and
    TokenizerReady from ``opt-tokenizer`` (not yet available), after the True SchedulerWorkloadReady."""
    doc = yaml.safe_load(plan("-f", str(ROOT / "examples" / "tokenizer.yaml")).stdout)
    assert [c["name"] for c in doc["status"]["appliedConfigs"]] == [
        "kserve-config-llm-scheduler",
        "kserve-config-llm-tokenizer",
        "kserve-config-llm-router-route",
        "kserve-config-llm-template",
    ]
    conditions = {c["type"]: c for c in doc["status"]["conditions"]}
    assert conditions["SchedulerWorkloadReady"]["status"] == "True"
    tokenizer = conditions["TokenizerReady"]
    assert (tokenizer["status"], tokenizer["reason"], tokenizer["message"]) == (
        "False",
        "MinimumReplicasUnavailable",
        "Deployment does not have minimum availability.",
    )
    assert doc["outcome"] == "reconciled"


def test_kind_list_input_is_accepted() -> None:
    docs = list(yaml.safe_load_all((ROOT / "examples" / "minimal-presets.yaml").read_text()))
    as_list = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": docs})
    expected = plan("-f", str(ROOT / "examples" / "minimal-presets.yaml")).stdout
    assert plan("-f", "-", stdin=as_list).stdout == expected


def test_a_json_state_file_as_kubectl_get_o_json_writes_it_plans_as_its_yaml_twin() -> None:
    docs = list(yaml.safe_load_all((ROOT / "examples" / "minimal-presets.yaml").read_text()))
    as_json = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=4)
    expected = plan("-f", str(ROOT / "examples" / "minimal-presets.yaml")).stdout
    assert plan("-f", "-", stdin=as_json).stdout == expected


def test_a_3000_level_json_list_is_one_line_not_a_traceback() -> None:
    result = plan("-f", "-", stdin='{"items": ' + "[" * 3000 + "]" * 3000 + "}")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "llmisvc-router plan: <stdin>: nested too deeply to read (an object may nest 100 levels)"
    ]


SVC = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: a, namespace: ns}
spec: {router: {route: {}}}
"""

BAD_INPUTS = [
    pytest.param("a: [1, 2\n", "<stdin>: invalid YAML at line 2 column 1", id="unparseable_yaml"),
    pytest.param(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        "<stdin>: no LLMInferenceService",
        id="no_service",
    ),
    pytest.param(
        SVC + "---\n" + SVC.replace("name: a", "name: b"),
        "<stdin>: 2 LLMInferenceServices (ns/a, ns/b); choose one with --name NAMESPACE/NAME or plan them "
        "all with --all",
        id="several_services_without_name",
    ),
    pytest.param(
        SVC.replace("v1alpha2", "v1alpha1"),
        "<stdin>: document 1: LLMInferenceService: apiVersion serving.kserve.io/v1alpha1 is not supported "
        "(expected serving.kserve.io/v1alpha2)",
        id="wrong_api_version",
    ),
    pytest.param(
        SVC.replace("route: {}", "route: {http: {refs: 5}}"),
        "LLMInferenceService ns/a: field spec.router.route.http.refs: Input should be a valid list",
        id="wrong_field_type",
    ),
    pytest.param(
        SVC + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
        "metadata: {name: r, namespace: ns}\nspec: {rules: [{matches: {}}]}\n",
        "HTTPRoute ns/r: field spec.rules[0].matches: Input should be a valid list",
        id="wrong_nested_type",
    ),
    pytest.param("- 1\n- 2\n", "<stdin>: document 1: not a Kubernetes object", id="not_an_object"),
    pytest.param(
        "kind: Gateway\nmetadata: {name: g}\n",
        "<stdin>: document 1: Gateway: field apiVersion is required",
        id="missing_api_version",
    ),
    pytest.param(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {}\n",
        "<stdin>: document 1: Gateway: field metadata.name is required",
        id="missing_name",
    ),
]


@pytest.mark.parametrize(("stdin", "message"), BAD_INPUTS)
def test_bad_input_exits_2_with_one_line_naming_the_object_and_field(stdin: str, message: str) -> None:
    result = plan("-f", "-", stdin=stdin)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("llmisvc-router plan: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr


def test_name_selects_one_of_several_services() -> None:
    text = SVC + "---\n" + SVC.replace("name: a", "name: b")
    result = plan("-f", "-", "--name", "ns/b", stdin=text)
    assert result.returncode == 0, result.stderr
    missing = plan("-f", "-", "--name", "ns/c", stdin=text)
    assert missing.returncode == 2
    assert "no LLMInferenceService ns/c in the file (found: ns/a, ns/b)" in missing.stderr


def test_missing_file_is_a_one_line_error() -> None:
    result = plan("-f", "does-not-exist.yaml")
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "llmisvc-router plan: does-not-exist.yaml: cannot read: No such file or directory"
    )


def test_help_describes_the_contract() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "llmisvc_router", "plan", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0
    for word in ("apply", "delete", "status", "outcome", "--name", "kind: List"):
        assert word in result.stdout


def test_plan_applies_base_refs_from_llminferenceserviceconfigs_in_the_state_file() -> None:
    doc = yaml.safe_load(plan("-f", str(ROOT / "examples" / "base-refs.yaml")).stdout)
    (route,) = [o for o in doc["apply"] if o["kind"] == "HTTPRoute"]
    assert route["spec"]["hostnames"] == ["team-a.example.com"]
    assert route["spec"]["parentRefs"][0]["name"] == "team-gateway"
    assert {"name": "team-a-defaults", "namespace": "team-a", "source": "UserRef"} in doc["status"][
        "appliedConfigs"
    ]


def test_plan_with_a_missing_base_ref_reports_presets_combined_false_and_writes_nothing() -> None:
    docs = list(yaml.safe_load_all((ROOT / "examples" / "base-refs.yaml").read_text()))
    text = yaml.safe_dump_all([d for d in docs if d["kind"] != "LLMInferenceServiceConfig"])
    doc = yaml.safe_load(plan("-f", "-", stdin=text).stdout)
    assert doc["apply"] == [] and doc["outcome"] == "invalid-references"
    (presets,) = [c for c in doc["status"]["conditions"] if c["type"] == "PresetsCombined"]
    assert (presets["status"], presets["reason"]) == ("False", "ConfigNotFound")


def test_5918_plan_skips_the_api_server_s_check_of_the_merged_spec_and_says_so_in_its_help() -> None:
    """KServe #5918 dry-run creates the merged spec; offline there is no API server, so ``plan`` merges,
    validates locally and routes as the live router does for an accepted spec. A header name the CRD's
    pattern refuses (the live router's ``InvalidRenderedConfig``) is planned into the route as it is."""
    docs = list(yaml.safe_load_all((ROOT / "examples" / "base-refs.yaml").read_text()))
    for doc in docs:
        if doc["kind"] == "LLMInferenceServiceConfig":
            match = {"headers": [{"name": "{{ .ObjectMeta.Name }} invalid", "value": "m"}]}
            route = doc["spec"].setdefault("router", {}).setdefault("route", {}).setdefault("http", {})
            route.setdefault("spec", {})["rules"] = [{"matches": [match]}]
    result = plan("-f", "-", stdin=yaml.safe_dump_all(docs))
    assert result.returncode == 0, result.stderr
    doc = yaml.safe_load(result.stdout)
    (presets,) = [c for c in doc["status"]["conditions"] if c["type"] == "PresetsCombined"]
    assert presets["status"] == "True" and doc["outcome"] == "reconciled"
    (route,) = [o for o in doc["apply"] if o["kind"] == "HTTPRoute"]
    assert route["spec"]["rules"][0]["matches"][0]["headers"][0]["name"].endswith(" invalid")
    helped = subprocess.run(
        [sys.executable, "-m", "llmisvc_router", "plan", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert "dry-run" in " ".join(helped.stdout.split())


# -- untrusted input: bounded depth, one-line errors ----------------------------------------------------


def test_a_3000_level_yaml_list_is_one_line_naming_the_file_not_a_traceback(tmp_path: Path) -> None:
    state = tmp_path / "deep.yaml"
    state.write_text("items: " + "[" * 3000 + "]" * 3000 + "\n")
    result = plan("-f", str(state))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"llmisvc-router plan: {state}: nested too deeply to read (an object may nest 100 levels)"
    ]


def test_an_object_nested_past_the_bound_is_one_line_naming_the_document_and_field(tmp_path: Path) -> None:
    extra = "1"
    for _ in range(150):
        extra = f"{{a: {extra}}}"
    state = tmp_path / "deep-field.yaml"
    state.write_text(
        "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nmetadata: {name: x}\n"
        f"spec: {{model: {{uri: 'hf://x', extra: {extra}}}}}\n"
    )
    result = plan("-f", str(state))
    assert result.returncode == 2
    field = "field spec.model.extra.a.a.a…: nested deeper than 100 levels"
    assert result.stderr.splitlines() == [f"llmisvc-router plan: {state}: document 1: {field}"]


def test_a_yaml_error_whose_message_spans_lines_prints_one_line(tmp_path: Path) -> None:
    state = tmp_path / "control.yaml"
    state.write_text("a: b\x07c\n")
    result = plan("-f", str(state))
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "unacceptable character #x0007" in result.stderr and str(state) in result.stderr
