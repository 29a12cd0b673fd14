"""``validateTrafficFields`` of KServe's LLMInferenceService validator (``pkg/apis/serving/v1alpha2/
llm_inference_service_validation.go`` at ``aaac4e294``, #5727), applied to the merged spec.

Upstream has no Go unit table for these rules (its e2e ``test_llm_canary_lifecycle.py`` drives them); the
cases are the rule's branches, in its order, with its field paths and messages.
"""

from __future__ import annotations

import pytest

from llmisvc_core.merge import spec_validation
from tests import builders as b
from tests.builders import Wire, plans

PREFIX = 'LLMInferenceService.serving.kserve.io "svc" is invalid: '
INGRESS = (
    'spec.router.route.group: Invalid value: "g": traffic splitting requires Gateway API routing; the '
    "controller manages HTTPRoutes, not Ingress resources"
)
REFS = (
    'spec.router.route.group: Invalid value: "g": traffic splitting cannot be used with custom HTTPRoute '
    "refs; controller-managed routes (route.http.spec or route.http: {}) are required"
)

CASES = [
    pytest.param({"route": {}}, None, id="no_traffic_fields_no_error"),
    pytest.param({"route": {"group": "g", "weight": 1, "http": {}}}, None, id="group_and_weight_together"),
    pytest.param({"route": {"group": "g", "weight": 0}}, None, id="weight_zero_is_a_weight"),
    pytest.param(
        {"route": {"weight": 3}},
        "spec.router.route.group: Required value: weight requires group",
        id="weight_requires_group",
    ),
    pytest.param(
        {"route": {"group": "g"}},
        "spec.router.route.weight: Required value: group requires weight",
        id="group_requires_weight",
    ),
    pytest.param(
        {"route": {"group": "g", "weight": 1}, "ingress": {}}, INGRESS, id="ingress_is_refused_first"
    ),
    pytest.param(
        {"route": {"weight": 1}, "ingress": {}},
        INGRESS.replace('"g"', '""'),
        id="ingress_with_only_a_weight_names_an_empty_group",
    ),
    pytest.param(
        {
            "route": {"group": "g", "weight": 1, "http": {"refs": [{"name": "mine"}]}},
            "gateway": {"refs": [{"name": "gw"}]},
        },
        REFS,
        id="http_refs_are_refused",
    ),
]


@pytest.mark.parametrize(("router", "error"), CASES)
def test_validate_traffic_fields(router: Wire, error: str | None) -> None:
    if error is None:
        spec_validation.validate("svc", {"router": router})
        return
    with pytest.raises(spec_validation.SpecInvalidError) as raised:
        spec_validation.validate("svc", {"router": router})
    assert str(raised.value) == PREFIX + error


def test_a_missing_half_ends_the_rule_before_the_refs_check() -> None:
    """``weight requires group`` and ``group requires weight`` cannot both hold; a missing half ends the
    rule before the refs check, so a group without weight on http.refs gives only the pairing error."""
    router = {
        "route": {"group": "g", "http": {"refs": [{"name": "mine"}]}},
        "gateway": {"refs": [{"name": "gw"}]},
    }
    with pytest.raises(spec_validation.SpecInvalidError) as raised:
        spec_validation.validate("svc", {"router": router})
    assert str(raised.value) == PREFIX + "spec.router.route.weight: Required value: group requires weight"


def test_an_invalid_traffic_spec_ends_the_pass_with_presets_combined_false() -> None:
    plan = plans.run(b.service(router={"route": {"weight": 5}, "gateway": {}}))
    cond = plans.condition(plan, "PresetsCombined")
    assert cond is not None and cond["reason"] == "CombineBaseError"
    assert "weight requires group" in cond["message"]
    assert plan.apply == [] and plan.outcome.value == "failed"
