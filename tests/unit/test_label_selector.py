"""The managed-services selector (llmisvc_core.gocompat.label_selector): the API server's grammar, matched
locally so each pass can check that its service is still selected."""

from __future__ import annotations

import pytest

from llmisvc_core.gocompat import label_selector
from llmisvc_core.gocompat.label_selector import SelectorError


def _obj(**labels: str) -> dict[str, object]:
    return {"metadata": {"labels": labels}}


@pytest.mark.parametrize(
    ("text", "labels", "selected"),
    [
        ("", {}, True),
        ("team=a", {"team": "a"}, True),
        ("team==a", {"team": "b"}, False),
        ("team!=a", {}, True),
        ("team in (a, b)", {"team": "b"}, True),
        ("team in (a,b)", {}, False),
        ("team notin (a,b)", {}, True),
        ("team notin (a,b)", {"team": "a"}, False),
        ("router.example.com/managed", {"router.example.com/managed": ""}, True),
        ("!legacy", {"legacy": "x"}, False),
        ("team=a,!legacy,tier in (gold)", {"team": "a", "tier": "gold"}, True),
        ("team=a,!legacy,tier in (gold)", {"team": "a", "tier": "silver"}, False),
    ],
    ids=repr,
)
def test_selection_follows_the_kubernetes_label_selector_grammar(
    text: str, labels: dict[str, str], selected: bool
) -> None:
    assert label_selector.parse(text).matches(_obj(**labels)) is selected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("team=a,,x", "empty requirement"),
        ("team in ()", "in needs values"),
        ("-team=a", "invalid label key '-team'"),
        ("team=a b", "invalid label value 'a b'"),
        ("Bad_Prefix/x=1", "invalid label key"),
        ("team=(a)", "invalid label value"),
    ],
)
def test_a_selector_the_api_server_would_refuse_is_refused_naming_the_requirement(
    text: str, message: str
) -> None:
    with pytest.raises(SelectorError, match=message.replace("(", r"\(")):
        label_selector.parse(text)
