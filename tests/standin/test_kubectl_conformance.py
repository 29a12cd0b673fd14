"""Conformance: this machine's kubectl against the stand-in, expecting Kubernetes' documented behaviour.

One row per kubectl session step a new user would take; each row runs in its own namespace of a
shared stand-in process. The expected outputs are what kubectl prints against a real cluster with
KServe and Gateway API installed.
"""

from __future__ import annotations

import json
import re

from .kubectl_session import service

READY_STATUS = {
    "status": {
        "url": "http://llm.example",
        "addresses": [{"url": "http://llm.example"}, {"url": "http://10.0.0.1"}],
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Ready",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
}


def test_create_namespace_configmap_deployment_secret_from_protobuf(kubectl, ns):
    assert (
        kubectl("create", "configmap", "c", "-n", ns, "--from-literal=a=b").stdout == "configmap/c created\n"
    )
    assert (
        kubectl("create", "deployment", "d", "-n", ns, "--image=nginx").stdout
        == "deployment.apps/d created\n"
    )
    assert (
        kubectl("create", "secret", "generic", "s", "-n", ns, "--from-literal=a=b").stdout
        == "secret/s created\n"
    )
    assert json.loads(kubectl("get", "cm", "c", "-n", ns, "-o", "json").stdout)["data"] == {"a": "b"}
    assert kubectl("get", "secret", "s", "-n", ns, "-o", "jsonpath={.data.a}").stdout == "Yg=="
    deployment = json.loads(kubectl("get", "deploy", "d", "-n", ns, "-o", "json").stdout)
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": "d"}}


def test_get_prints_kserves_printer_columns_with_jsonpath_filters(kubectl, ns):
    kubectl("apply", "-f", "-", stdin=service(ns))
    kubectl(
        "patch",
        "llmisvc",
        "llm",
        "-n",
        ns,
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        json.dumps(READY_STATUS),
    )
    header, row = kubectl("get", "llmisvc", "-n", ns).stdout.splitlines()
    assert header.split() == ["NAME", "URL", "READY", "REASON", "AGE"]
    assert row.split()[:4] == ["llm", "http://llm.example", "True", "Ready"]
    wide_header, wide_row = kubectl("get", "llmisvc", "-n", ns, "-o", "wide").stdout.splitlines()
    assert wide_header.split() == ["NAME", "URL", "READY", "REASON", "AGE", "URLS"]
    assert wide_row.split()[-1] == "http://llm.example"  # the first match, as the real table convertor


def test_explain_walks_the_crd_schema(kubectl):
    explained = kubectl("explain", "llmisvc.spec.router").stdout
    assert "KIND:       LLMInferenceService" in explained and "FIELD: router <Object>" in explained
    assert re.search(r"^\s+route\s+<Object>", explained, re.M)
    assert "ParentRefs references the resources" in kubectl("explain", "httproute.spec.parentRefs").stdout


def test_apply_of_an_invalid_object_is_refused_with_the_field(kubectl, ns):
    refused = kubectl(
        "apply", "-f", "-", stdin=service(ns, **{"spec:": "spec:\n  replicas: two"}), check=False
    )
    assert refused.returncode != 0
    assert (
        'The LLMInferenceService "llm" is invalid: spec.replicas: Invalid value: "string"' in refused.stderr
    )


def test_apply_with_an_unknown_field_is_a_strict_decoding_error(kubectl, ns):
    refused = kubectl("apply", "-f", "-", stdin=service(ns, **{"spec:": "spec:\n  surprise: 1"}), check=False)
    assert refused.returncode != 0
    assert 'strict decoding error: unknown field "spec.surprise"' in refused.stderr
    warned = kubectl(
        "apply", "--validate=warn", "-f", "-", stdin=service(ns, **{"spec:": "spec:\n  surprise: 1"})
    )
    assert 'unknown field "spec.surprise"' in warned.stderr


def test_patch_types_merge_json_and_strategic_refused_for_custom_resources(kubectl, ns):
    kubectl("apply", "-f", "-", stdin=service(ns))
    kubectl("patch", "llmisvc", "llm", "-n", ns, "--type", "merge", "-p", '{"spec":{"replicas":2}}')
    kubectl(
        "patch",
        "llmisvc",
        "llm",
        "-n",
        ns,
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/replicas","value":3}]',
    )
    assert kubectl("get", "llmisvc", "llm", "-n", ns, "-o", "jsonpath={.spec.replicas}").stdout == "3"
    refused = kubectl(
        "patch",
        "llmisvc",
        "llm",
        "-n",
        ns,
        "--type",
        "strategic",
        "-p",
        '{"spec":{"replicas":4}}',
        check=False,
    )
    assert refused.returncode != 0
    assert "application/strategic-merge-patch+json is not supported" in refused.stderr


def test_server_side_apply_creates_then_applies_again(kubectl, ns):
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=service(ns)).stdout
    changed = service(ns, **{"hf://org/model": "hf://org/other"})
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=changed).stdout
    assert (
        kubectl("get", "llmisvc", "llm", "-n", ns, "-o", "jsonpath={.spec.model.uri}").stdout
        == "hf://org/other"
    )


def test_scale_a_deployment_through_its_scale_subresource(kubectl, ns):
    kubectl("create", "deployment", "d", "-n", ns, "--image=nginx")
    assert (
        kubectl("scale", "deployment", "d", "-n", ns, "--replicas=3").stdout == "deployment.apps/d scaled\n"
    )
    assert kubectl("get", "deploy", "d", "-n", ns, "-o", "jsonpath={.spec.replicas}").stdout == "3"


def test_delete_of_a_file_that_starts_with_its_namespace_deletes_every_item(kubectl):
    manifest = "apiVersion: v1\nkind: Namespace\nmetadata: {name: doomed}\n---\n" + service("doomed")
    manifest += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: doomed}\ndata: {a: b}\n"
    kubectl("apply", "-f", "-", stdin=manifest)
    deleted = kubectl("delete", "-f", "-", "--wait=false", stdin=manifest)
    assert deleted.stdout.splitlines() == [
        'namespace "doomed" deleted',
        # kubectl 1.37 names the namespace of a namespaced object it deleted
        'llminferenceservice.serving.kserve.io "llm" deleted from doomed namespace',
        'configmap "c" deleted from doomed namespace',
    ]
    kubectl("wait", "--for=delete", "namespace/doomed", "--timeout=20s")


def test_a_deleted_namespace_shows_terminating_and_refuses_new_content(kubectl):
    kubectl("create", "namespace", "closing")
    kubectl("create", "configmap", "held", "-n", "closing", "--from-literal=a=b")
    kubectl(
        "patch",
        "configmap",
        "held",
        "-n",
        "closing",
        "--type",
        "merge",
        "-p",
        '{"metadata":{"finalizers":["example.com/hold"]}}',
    )
    kubectl("delete", "namespace", "closing", "--wait=false")
    assert "Terminating" in kubectl("get", "namespace", "closing").stdout
    refused = kubectl("create", "configmap", "late", "-n", "closing", "--from-literal=a=b", check=False)
    assert (
        "unable to create new content in namespace closing because it is being terminated" in refused.stderr
    )
    kubectl(
        "patch",
        "configmap",
        "held",
        "-n",
        "closing",
        "--type",
        "merge",
        "-p",
        '{"metadata":{"finalizers":null}}',
    )
    kubectl("wait", "--for=delete", "namespace/closing", "--timeout=20s")


def test_wait_for_a_condition_set_by_a_status_write(kubectl, ns):
    kubectl("apply", "-f", "-", stdin=service(ns))
    kubectl(
        "patch",
        "llmisvc",
        "llm",
        "-n",
        ns,
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        json.dumps(READY_STATUS),
    )
    waited = kubectl("wait", "--for=condition=Ready", "llmisvc/llm", "-n", ns, "--timeout=10s")
    assert waited.stdout == "llminferenceservice.serving.kserve.io/llm condition met\n"
