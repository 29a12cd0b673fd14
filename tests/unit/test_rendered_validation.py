"""KServe #5918 (f2849c052, ``config_merge.go`` ``reconcileBaseRefs``, ``validationDetail``,
``renderedConfigConditionMessage``): the merged spec is dry-run created as a throwaway service, and the
API server's answer decides ``PresetsCombined``. Ported from ``config_merge_reconcile_test.go``
(``TestReconcileBaseRefs_DryRunValidatesRenderedSpec``, ``_InvalidConfigClearsStaleReady``,
``_DryRunTransientFailureRequeues``). ``INVALID_HEADER``, ``CEL_RULE`` and ``FORBIDDEN`` are the Status
bodies the pinned kube-apiserver answered to such dry runs (the vendored aaac4e294 CRD; ``FORBIDDEN`` asked
as an account without ``create``, here named as the worker in namespace ``ns``); ``WEBHOOK_DOWN`` is
KServe's own transient example in the same shape, since no admission webhook runs on the test plane."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.merge import rendered_validation
from llmisvc_core.merge.rendered_validation import Outcome, Verdict
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.planner.passes import plan_pass
from llmisvc_core.planner.plan import PassPlan
from llmisvc_core.world.config import Environment
from tests import builders as b
from tests.builders import plans

Wire = dict[str, Any]
INGRESS = ("kserve", "kserve-ingress-gateway")
HEADER_FIELD = "spec.router.route.http.spec.rules[0].matches[0].headers[0].name"
#: The gateway-api pattern, verbatim: its '%' catches a message used as a format string (KServe's test).
HEADER_PATTERN = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
#: What kube-apiserver answered to the dry-run create of a merged spec with an invalid header name.
INVALID_HEADER: Wire = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": (
        'LLMInferenceService.serving.kserve.io "svc-validation-jm92z" is invalid: '
        f'{HEADER_FIELD}: Invalid value: "svc invalid": {HEADER_FIELD} in body should match '
        f"'{HEADER_PATTERN}'"
    ),
    "reason": "Invalid",
    "details": {
        "name": "svc-validation-jm92z",
        "group": "serving.kserve.io",
        "kind": "LLMInferenceService",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": f'Invalid value: "svc invalid": {HEADER_FIELD} in body should match '
                f"'{HEADER_PATTERN}'",
                "field": HEADER_FIELD,
            }
        ],
    },
    "code": 422,
}
#: A CEL rule of the CRD (``replicas`` and ``scaling`` together), a cause with a field.
CEL_RULE: Wire = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": 'LLMInferenceService.serving.kserve.io "svc-validation-tqw7g" is invalid: spec: Invalid '
    "value: replicas and scaling are mutually exclusive; use scaling for autoscaled deployments or "
    "replicas for static deployments",
    "reason": "Invalid",
    "details": {
        "name": "svc-validation-tqw7g",
        "group": "serving.kserve.io",
        "kind": "LLMInferenceService",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: replicas and scaling are mutually exclusive; use scaling for "
                "autoscaled deployments or replicas for static deployments",
                "field": "spec",
            }
        ],
    },
    "code": 422,
}
#: KServe's transient example: a webhook the API server could not call.
WEBHOOK_DOWN: Wire = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": 'Internal error occurred: failed calling webhook "llminferenceservice.kserve-webhook-server'
    '.validator": connection refused',
    "reason": "InternalError",
    "details": {"causes": [{"message": "failed calling webhook: connection refused"}]},
    "code": 500,
}
FORBIDDEN: Wire = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": 'llminferenceservices.serving.kserve.io is forbidden: User "system:serviceaccount:'
    'llmisvc-router:llmisvc-router-worker" cannot create resource "llminferenceservices" in API group '
    '"serving.kserve.io" in the namespace "ns"',
    "reason": "Forbidden",
    "details": {"group": "serving.kserve.io", "kind": "llminferenceservices"},
    "code": 403,
}


def _custom_config(**spec: Any) -> Wire:
    return b.llmisvc_config("custom-config", "ns", **spec)


def _service(**overrides: Any) -> Wire:
    return b.service(model=b.model(), baseRefs=[{"name": "custom-config"}], **overrides)


def _world() -> list[Wire]:
    hostnames = {"route": {"http": {"spec": {"hostnames": ["team.example.com"]}}}}
    return [
        b.gateway_class(),
        b.gateway(INGRESS[1], INGRESS[0], addresses=["203.0.113.50"]),
        _custom_config(router=hostnames),
    ]


def _plan(svc: Wire, verdicts: dict[str, Verdict] | None, *objects: Wire) -> PassPlan:
    world = plans.snapshot(svc, *(objects or _world()))
    return plan_pass(LLMInferenceService.model_validate(svc), world, Environment(), b.NOW, verdicts=verdicts)


def _refused(svc: Wire, body: Wire, *objects: Wire) -> tuple[Verdict, PassPlan]:
    """The verdict on the merged spec of ``svc`` had the API server answered ``body``, and the pass."""
    dry_run = _plan(svc, {}, *objects).dry_run
    assert dry_run is not None
    digest = rendered_validation.digest_of(dry_run)
    verdict = rendered_validation.from_refusal(digest, body["code"], body, body["message"])
    return verdict, _plan(svc, {digest: verdict}, *objects)


def test_5918_invalid_rendered_config_the_object_sent_is_the_merged_spec_under_a_generated_name() -> None:
    """``validated.Name`` empty, ``GenerateName`` ``<name>-validation-``, the service's namespace, and the
    merged spec (the config's hostname, not only the service's own fields); nothing else of the service:
    no labels, annotations, owner, uid or status."""
    svc = _service(router={"route": {}}, annotations={"team": "a"})
    svc["metadata"]["labels"] = {"app": "svc"}
    svc["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}

    plan = _plan(svc, {})

    assert plan.dry_run is not None
    assert plan.dry_run["apiVersion"] == "serving.kserve.io/v1alpha2"
    assert plan.dry_run["kind"] == "LLMInferenceService"
    assert plan.dry_run["metadata"] == {"generateName": "svc-validation-", "namespace": "ns"}
    spec = plan.dry_run["spec"]
    assert spec["router"]["route"]["http"]["spec"]["hostnames"] == ["team.example.com"]
    assert spec["model"] == b.model()
    assert spec["baseRefs"] == [{"name": "custom-config"}]
    assert len(spec["router"]["route"]["http"]["spec"]["rules"]) == 12, "the route preset, merged"


def test_5918_invalid_rendered_config_a_pass_without_a_verdict_decides_nothing() -> None:
    """The pass stops at the merge: no write, the stored status as it was, for the workflow to ask."""
    svc = _service(router={"route": {}}, status={"conditions": [{"type": "Ready", "status": "True"}]})

    plan = _plan(svc, {})

    assert (plan.apply, plan.delete, plan.outcome) == ([], [], "reconciled")
    assert plan.status == {"conditions": [{"type": "Ready", "status": "True"}]}


def test_5918_invalid_rendered_config_a_long_name_is_shortened_as_knative_s_child_name() -> None:
    name = "a" * 60
    dry_run = rendered_validation.dry_run_object(name, "ns", {})
    generate = dry_run["metadata"]["generateName"]
    assert len(generate) == 63 and generate.endswith("-validation-") and generate.startswith("a" * 19)


def test_5918_invalid_rendered_config_a_rejection_names_the_configs_merged_and_the_fields() -> None:
    """``PresetsCombined=False(InvalidRenderedConfig)`` with every config merged (``Source:ns/name``), the
    refused field and the API server's text intact (its '%'); never the throwaway object's name.
    ``Ready`` carries the same reason and message; ``status.appliedConfigs`` is kept for provenance
    (replacing a stale one); nothing is written and the pass ends as failed, not retried in a loop."""
    svc = _service(router={"route": {}})
    svc["status"] = {"appliedConfigs": [{"name": "stale-config", "namespace": "ns", "source": "Preset"}]}

    verdict, plan = _refused(svc, INVALID_HEADER)

    assert verdict.outcome is Outcome.REJECTED
    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None
    assert (presets["status"], presets["reason"]) == ("False", "InvalidRenderedConfig")
    assert presets["message"] == (
        "dry-run validation failed after merging configs [Preset:kserve/kserve-config-llm-router-route, "
        "Preset:kserve/kserve-config-llm-template, UserRef:ns/custom-config]: "
        f'{HEADER_FIELD}: Invalid value: "svc invalid": {HEADER_FIELD} in body should match '
        f"'{HEADER_PATTERN}'"
    )
    assert "svc-validation" not in presets["message"] and "%!" not in presets["message"]
    assert plans.condition(plan, "Ready") == {**presets, "type": "Ready"}
    assert plan.status["appliedConfigs"] == [
        {"name": "kserve-config-llm-router-route", "namespace": "kserve", "source": "Preset"},
        {"name": "kserve-config-llm-template", "namespace": "kserve", "source": "Preset"},
        {"name": "custom-config", "namespace": "ns", "source": "UserRef"},
    ]
    assert (plan.apply, plan.delete, plan.outcome) == ([], [], "failed")
    assert plan.message == f"rendered config rejected: {INVALID_HEADER['message']}"


def test_5918_invalid_rendered_config_clears_a_stale_ready() -> None:
    """``_InvalidConfigClearsStaleReady``: a service Ready before its config was edited is not Ready
    off the sub-conditions the stopped pass leaves behind."""
    svc = _service(router={"route": {}})
    svc["status"] = {
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": "2025-12-31T00:00:00Z"}
            for t in ("PresetsCombined", "Ready", "RouterReady", "WorkloadsReady")
        ]
    }

    _, plan = _refused(svc, CEL_RULE)

    ready = plans.condition(plan, "Ready")
    assert ready is not None and (ready["status"], ready["reason"]) == ("False", "InvalidRenderedConfig")
    assert ready["message"].endswith(
        "]: spec: Invalid value: replicas and scaling are mutually exclusive; use scaling for "
        "autoscaled deployments or replicas for static deployments"
    )
    router = plans.condition(plan, "RouterReady")
    assert router is not None and router["status"] == "True"


@pytest.mark.parametrize("body", [WEBHOOK_DOWN, FORBIDDEN], ids=["webhook-unreachable", "forbidden"])
def test_5918_invalid_rendered_config_a_check_without_an_answer_is_unknown(body: Wire) -> None:
    """``_DryRunTransientFailureRequeues``: anything but Invalid means the spec was never checked:
    ``PresetsCombined`` and ``Ready`` are Unknown (ValidationUnavailable) with the cause, appliedConfigs
    are kept, and the pass ends as failed so the re-check asks again (the verdict is not final)."""
    verdict, plan = _refused(_service(router={"route": {}}), body)

    assert verdict.outcome is Outcome.UNAVAILABLE and not verdict.final
    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None
    assert (presets["status"], presets["reason"]) == ("Unknown", "ValidationUnavailable")
    assert presets["message"].startswith("dry-run validation failed after merging configs [Preset:")
    ready = plans.condition(plan, "Ready")
    assert ready is not None and (ready["status"], ready["reason"]) == ("Unknown", "ValidationUnavailable")
    assert plan.status["appliedConfigs"][-1] == {
        "name": "custom-config",
        "namespace": "ns",
        "source": "UserRef",
    }
    assert plan.outcome == "failed" and plan.apply == []
    assert plan.message == f"failed to dry-run validate rendered config: {body['message']}"


def test_5918_invalid_rendered_config_webhook_detail_is_its_cause() -> None:
    _, plan = _refused(_service(router={"route": {}}), WEBHOOK_DOWN)
    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and presets["message"].endswith(
        "]: failed calling webhook: connection refused"
    )


def test_5918_invalid_rendered_config_an_accepted_spec_plans_as_without_the_check() -> None:
    """Accepted: the pass is the one it always was (the check adds no condition, no write)."""
    svc = _service(router={"route": {}, "gateway": {}, "scheduler": {}})
    dry_run = _plan(svc, {}).dry_run
    assert dry_run is not None
    digest = rendered_validation.digest_of(dry_run)

    checked = _plan(svc, {digest: rendered_validation.accepted(digest)})

    assert checked == _plan(svc, None)
    assert checked.dry_run is None and checked.apply != []


def test_5918_invalid_rendered_config_a_verdict_is_for_one_merged_spec_only() -> None:
    """Same service, same configs: the same digest, so the verdict is reused. A config edited: a new
    merged spec, which the old verdict does not answer."""
    svc = _service(router={"route": {}})
    first = _plan(svc, {}).dry_run
    assert first is not None and _plan(svc, {}).dry_run == first
    digest = rendered_validation.digest_of(first)
    verdict = rendered_validation.accepted(digest)

    edited = [
        *_world()[:2],
        _custom_config(router={"route": {"http": {"spec": {"hostnames": ["b.example.com"]}}}}),
    ]
    again = _plan(svc, {digest: verdict}, *edited)

    assert again.dry_run is not None and rendered_validation.digest_of(again.dry_run) != digest


def test_5918_invalid_rendered_config_a_stopped_service_is_stopped_with_a_warning() -> None:
    """A stopped service whose merged spec is refused: ``Stopped`` with the API server's error, and the
    stop is carried out with the service's own spec (its managed route deleted)."""
    svc = b.stopped(_service(router={"route": {}}))
    route = b.http_route("svc-kserve-route", parents=[INGRESS], owner_uid=b.UID)

    _, plan = _refused(svc, INVALID_HEADER, *_world(), route)

    presets = plans.condition(plan, "PresetsCombined")
    assert presets is not None and (presets["status"], presets["reason"]) == ("False", "Stopped")
    assert presets["message"] == f"Service is stopped with warning: {INVALID_HEADER['message']}"
    assert [ref.name for ref in plan.delete] == ["svc-kserve-route"]


def test_5918_invalid_rendered_config_offline_the_check_is_skipped() -> None:
    """``plan`` has no API server: without verdicts (None) the merged spec is used as it is."""
    plan = _plan(_service(router={"route": {}}), None)
    presets = plans.condition(plan, "PresetsCombined")
    assert plan.dry_run is None and presets is not None and presets["status"] == "True"


@pytest.mark.parametrize(
    ("code", "body", "outcome", "detail"),
    [
        (422, INVALID_HEADER, Outcome.REJECTED, INVALID_HEADER["details"]["causes"][0]["message"]),
        (
            422,
            {**CEL_RULE, "details": {"causes": [*CEL_RULE["details"]["causes"], {"message": "second"}]}},
            Outcome.REJECTED,
            "spec: " + CEL_RULE["details"]["causes"][0]["message"] + "; second",
        ),
        (422, {**INVALID_HEADER, "details": {"name": "x"}}, Outcome.REJECTED, INVALID_HEADER["message"]),
        (422, {**INVALID_HEADER, "reason": "SomethingNew"}, Outcome.REJECTED, None),
        (422, {**INVALID_HEADER, "reason": "BadRequest"}, Outcome.UNAVAILABLE, None),
        (400, {**INVALID_HEADER, "reason": "BadRequest", "code": 400}, Outcome.UNAVAILABLE, None),
        (403, FORBIDDEN, Outcome.UNAVAILABLE, FORBIDDEN["message"]),
        (500, WEBHOOK_DOWN, Outcome.UNAVAILABLE, "failed calling webhook: connection refused"),
        (422, "not a Status", Outcome.REJECTED, "POST: HTTP 422"),
        (0, None, Outcome.UNAVAILABLE, "POST: HTTP 422"),
    ],
    ids=[
        "invalid-field",
        "two-causes-one-without-field",
        "invalid-without-causes",
        "422-unknown-reason",
        "422-known-other-reason",
        "bad-request",
        "forbidden",
        "webhook-unreachable",
        "422-without-status",
        "no-answer",
    ],
)
def test_5918_invalid_rendered_config_is_invalid_reads_the_answer_as_apierrors_does(
    code: int, body: object, outcome: Outcome, detail: str | None
) -> None:
    """``apierrors.IsInvalid`` (reason Invalid, or an unknown reason with 422) and ``validationDetail``
    (``field: message`` per cause, the message alone without a field, else the whole error)."""
    error = body["message"] if isinstance(body, dict) else "POST: HTTP 422"
    verdict = rendered_validation.from_refusal("d", code, body, error)
    assert verdict.outcome is outcome
    assert verdict.error == error
    if detail is not None:
        assert verdict.detail == (f"{HEADER_FIELD}: {detail}" if body is INVALID_HEADER else detail)


def test_5918_invalid_rendered_config_the_digest_ignores_key_order_not_content() -> None:
    one = rendered_validation.dry_run_object("svc", "ns", {"model": {"name": "m", "uri": "u"}})
    same = rendered_validation.dry_run_object("svc", "ns", {"model": {"uri": "u", "name": "m"}})
    other = rendered_validation.dry_run_object("svc", "ns", {"model": {"uri": "u", "name": "n"}})
    assert rendered_validation.digest_of(one) == rendered_validation.digest_of(same)
    assert rendered_validation.digest_of(one) != rendered_validation.digest_of(other)


def test_5918_invalid_rendered_config_unrendered_pod_template_values_are_left_out() -> None:
    """The router renders only the fields it reads; a value of the workload's pod template that is
    still a template (a quantity the config's loose schema took) is not sent, since its text would break
    a pattern that KServe's rendered value meets. The rest of the template is sent as merged."""
    resources = {"limits": {"cpu": "{{ .Spec.Replicas }}", "memory": "1Gi"}}
    container = {"name": "main", "resources": resources, "args": ["--model={{ .Spec.Model.Name }}"]}
    config = _custom_config(template={"containers": [container]})

    dry_run = _plan(_service(), {}, *_world()[:2], config).dry_run

    assert dry_run is not None
    (sent,) = dry_run["spec"]["template"]["containers"]
    assert sent["resources"] == {"limits": {"memory": "1Gi"}}
    assert sent["args"] == ["--model={{ .Spec.Model.Name }}"], "list items carry no pattern: kept"
    assert dry_run["spec"]["model"] == b.model()
