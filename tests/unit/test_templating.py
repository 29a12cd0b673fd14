"""The strict template renderer (KServe's ``ReplaceVariables`` subset; cases of ``config_merge_test.go``)."""

from __future__ import annotations

import pytest

from llmisvc_core.gocompat.templating import TemplateData, TemplateError, render

DATA = TemplateData(
    name="test-llm",
    namespace="test-ns",
    spec={"model": {"name": "facebook/opt"}, "parallelism": {"tensor": 2}},
    global_config={"IngressGatewayName": "gw", "EnableTLS": False, "ModelBasedRoutingHeaderName": "X-Model"},
)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("{{ ChildName .ObjectMeta.Name `-sa` }}", "test-llm-sa"),
        ('{{ ChildName .Name "-deployment" }}', "test-llm-deployment"),
        ("--config-path=/config/{{ .Name }}.yaml", "--config-path=/config/test-llm.yaml"),
        (
            "publishers/{{ .ObjectMeta.Namespace }}/models/{{ .Spec.Model.Name }}",
            "publishers/test-ns/models/facebook/opt",
        ),
        ("{{ .GlobalConfig.IngressGatewayName }}", "gw"),
        ("{{ if .Spec.Model.Name }}{{ .Spec.Model.Name }}{{ else }}default-model{{ end }}", "facebook/opt"),
        ("{{ if .Spec.Model.URI }}x{{ else }}default-model{{ end }}", "default-model"),
        ("a {{- if .GlobalConfig.EnableTLS }} --tls{{- end }}", "a"),
        ("{{ .Spec.Parallelism.Tensor }}", "2"),
    ],
)
def test_renders_kserves_template_subset(text: str, want: str) -> None:
    assert render(text, DATA, "cfg") == want


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{{ .Name", "cfg: template '{{ .Name': unclosed action"),
        ("{{ .NonExistentField }}", "cfg: unsupported template expression {{ .NonExistentField }}"),
        (
            "{{ .GlobalConfig.CredentialConfig.StorageSpecSecretName }}",
            "cfg: unsupported template expression",
        ),
        ("{{ printf `%s` .Name }}", "cfg: unsupported template expression {{ printf `%s` .Name }}"),
        ("{{ .Spec.Model.URI }}", "cfg: {{ .Spec.Model.URI }} has no value"),
        ("{{ if .Name }}x", "cfg: missing {{ end }}"),
    ],
    ids=[
        "invalid-syntax",
        "non-existent-field",
        "credential-config",
        "other-function",
        "absent-value",
        "no-end",
    ],
)
def test_anything_else_is_an_error_naming_the_config_and_expression(text: str, error: str) -> None:
    with pytest.raises(TemplateError) as info:
        render(text, DATA, "cfg")
    assert str(info.value).startswith(error)
