"""Writes are validated as kube-apiserver validates them: the CRD's schema and CEL rules, built-in checks.

Every expectation here is Kubernetes' documented behaviour for custom resources (structural schemas:
pruning, defaulting, OpenAPI v3 validation, ``x-kubernetes-validations``) and for the built-in kinds.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.builders import inference_pool
from tests.builders.kube import deployment

from .helpers import GATEWAY, gateway, http, llmisvc, route

SERVING = ("serving.kserve.io", "v1alpha2")


def post(standin: Any, path: str, body: Any) -> tuple[int, Any]:
    code, answer, _ = http(f"{standin.url}{path}", "POST", body)
    return code, answer


def routes_path() -> str:
    return "/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes"


def llmisvc_path() -> str:
    return "/apis/serving.kserve.io/v1alpha2/namespaces/default/llminferenceservices"


def causes(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in answer["details"]["causes"]]


def test_a_field_of_the_wrong_type_is_422_with_the_real_message(standin):
    body = llmisvc("x", model={"uri": "hf://a/b"}, replicas="two")
    code, answer = post(standin, llmisvc_path(), body)
    assert code == 422 and answer["reason"] == "Invalid"
    detail = 'Invalid value: "string": spec.replicas in body must be of type integer: "string"'
    assert (
        answer["message"] == f'LLMInferenceService.serving.kserve.io "x" is invalid: spec.replicas: {detail}'
    )
    assert causes(answer) == [("spec.replicas", "FieldValueTypeInvalid", detail)]


def test_an_object_given_a_string_is_refused(standin):
    code, answer = post(
        standin, llmisvc_path(), llmisvc("x", model={"uri": "hf://a/b"}, router={"route": "yes"})
    )
    assert code == 422 and [c[0] for c in causes(answer)] == ["spec.router.route"]


def test_a_missing_required_field_is_required_value(standin):
    body = {**inference_pool("p"), "spec": {"targetPorts": [{"number": 8000}]}}
    code, answer = post(
        standin, "/apis/inference.networking.k8s.io/v1/namespaces/default/inferencepools", body
    )
    assert code == 422
    assert causes(answer) == [("spec.selector", "FieldValueRequired", "Required value")]


def test_a_value_outside_the_enum_is_unsupported_value(standin):
    body = route("r")
    body["spec"]["rules"][0]["matches"] = [{"path": {"type": "Prefix", "value": "/"}}]
    code, answer = post(standin, routes_path(), body)
    assert code == 422
    message = 'Unsupported value: "Prefix": supported values: "Exact", "PathPrefix", "RegularExpression"'
    assert ("spec.rules[0].matches[0].path.type", "FieldValueNotSupported", message) in causes(answer)


def test_more_items_than_max_items_is_too_many(standin):
    body = route("r")
    body["spec"]["rules"] = [{"backendRefs": []} for _ in range(17)]
    code, answer = post(standin, routes_path(), body)
    assert code == 422
    assert ("spec.rules", "FieldValueTooMany", "Too many: 17: must have at most 16 items") in causes(answer)


def test_a_cel_rule_refuses_an_httproute_over_gateway_apis_128_match_limit(standin):
    body = route("r")
    matches = [{"path": {"type": "PathPrefix", "value": f"/m{i}"}} for i in range(9)]
    body["spec"]["rules"] = [{"matches": matches} for _ in range(15)]  # 135 matches, 9 per rule
    code, answer = post(standin, routes_path(), body)
    assert code == 422
    [(field, reason, message)] = causes(answer)
    assert (field, reason) == ("spec.rules", "FieldValueInvalid")
    assert message.startswith('Invalid value: "array": While 16 rules and 64 matches per rule are allowed')


def test_a_cel_rule_with_a_field_path_reports_at_that_path(standin):
    body = route("r")
    body["spec"]["rules"][0]["matches"] = [{"path": {"type": "PathPrefix", "value": "no-slash"}}]
    code, answer = post(standin, routes_path(), body)
    assert code == 422
    fields = {c[0] for c in causes(answer)}
    assert "spec.rules[0].matches[0].path" in fields


def test_defaults_are_applied_on_write(custom):
    stored = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    assert stored["spec"]["parentRefs"][0] == {"name": "gw", "group": GATEWAY[0], "kind": "Gateway"}
    assert stored["spec"]["rules"][0]["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert stored["spec"]["rules"][0]["backendRefs"][0]["weight"] == 1


def test_unknown_fields_are_pruned_and_nulls_dropped(custom):
    body = route("r")
    body["spec"]["surprise"] = {"a": 1}
    body["spec"]["hostnames"] = None
    stored = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", body)
    assert "surprise" not in stored["spec"] and "hostnames" not in stored["spec"]


def test_preserve_unknown_fields_keeps_what_the_schema_does_not_name(custom):
    body = llmisvc("m")
    body["spec"]["template"] = {"containers": [{"name": "main", "image": "i"}]}
    stored = custom.create_namespaced_custom_object(*SERVING, "default", "llminferenceservices", body)
    assert stored["spec"]["template"]["containers"][0]["image"] == "i"


def test_int_or_string_accepts_either_and_refuses_a_boolean(standin):
    body = llmisvc("m")
    body["spec"]["template"] = {
        "containers": [
            {
                "name": "c",
                "image": "i",
                "ports": [{"containerPort": 80}],
                "livenessProbe": {"httpGet": {"port": True}},
            }
        ]
    }
    code, answer = post(standin, llmisvc_path(), body)
    assert code == 422
    field = "spec.template.containers[0].livenessProbe.httpGet.port"
    message = f'Invalid value: "boolean": {field} in body must be of type integer,string: "boolean"'
    assert causes(answer) == [(field, "FieldValueTypeInvalid", message)]
    for port in (8080, "http"):
        body["spec"]["template"]["containers"][0]["livenessProbe"]["httpGet"]["port"] = port
        body["metadata"]["name"] = f"m-{port}"
        assert post(standin, llmisvc_path(), body)[0] == 201


def test_a_list_map_with_a_duplicate_key_is_duplicate_value(standin):
    body = gateway("g")
    body["spec"]["listeners"].append(dict(body["spec"]["listeners"][0]))
    code, answer = post(standin, "/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways", body)
    assert code == 422
    assert any(c[1] == "FieldValueDuplicate" and c[0] == "spec.listeners[1]" for c in causes(answer))


def test_status_writes_are_validated_too(custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("g"))
    with pytest.raises(client.ApiException) as exc:
        custom.patch_namespaced_custom_object_status(
            *GATEWAY, "default", "gateways", "g", {"status": {"conditions": [{"type": "Programmed"}]}}
        )
    assert exc.value.status == 422


def test_a_clusterip_service_without_ports_is_refused(core):
    body = {"metadata": {"name": "epp"}, "spec": {"selector": {"app": "x"}, "ports": []}}
    with pytest.raises(client.ApiException) as exc:
        core.create_namespaced_service("default", body)
    assert exc.value.status == 422
    assert '"spec.ports"' in str(exc.value.body) and "Required value" in str(exc.value.body)


def test_a_headless_service_may_have_no_ports(core):
    core.create_namespaced_service("default", {"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}})


def test_a_deployment_whose_selector_does_not_match_its_template_is_refused(api_client):
    body = deployment("d")
    body["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    with pytest.raises(client.ApiException) as exc:
        apps: Any = client.AppsV1Api(api_client)
        apps.create_namespaced_deployment("default", body)
    assert exc.value.status == 422
    assert "`selector` does not match template `labels`" in str(exc.value.body)


def test_a_namespace_name_must_be_a_dns_label(core):
    with pytest.raises(client.ApiException) as exc:
        core.create_namespace({"metadata": {"name": "a.b"}})
    assert exc.value.status == 422 and "RFC 1123 label" in str(exc.value.body)


def test_a_service_name_must_be_a_dns_1035_label(core):
    with pytest.raises(client.ApiException) as exc:
        core.create_namespaced_service(
            "default", {"metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}}
        )
    assert exc.value.status == 422 and "DNS-1035 label" in str(exc.value.body)
