"""Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors on list (watch: test_watch)."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from apiserver_standin.errors import ApiError
from apiserver_standin.selectors import label_predicate

from .helpers import configmap

OBJECTS = {"a": {"env": "prod", "tier": "web"}, "b": {"env": "dev"}, "c": {"tier": "db"}, "d": {}}


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        ("env=prod", {"a"}),
        ("env==dev", {"b"}),
        ("env!=prod", {"b", "c", "d"}),
        ("env in (prod, dev)", {"a", "b"}),
        ("env notin (prod)", {"b", "c", "d"}),
        ("tier", {"a", "c"}),
        ("!tier", {"b", "d"}),
        ("env=prod,tier=web", {"a"}),
        ("tier,env notin (dev,prod)", {"c"}),
    ],
)
def test_label_selector_operators(selector, names):
    predicate = label_predicate(selector)
    assert predicate is not None
    assert {n for n, labels in OBJECTS.items() if predicate({"metadata": {"labels": labels}})} == names


def test_label_selectors_filter_lists_through_the_api(core):
    for name, labels in OBJECTS.items():
        core.create_namespaced_config_map("default", configmap(name, labels))
    listed = core.list_namespaced_config_map("default", label_selector="env in (prod,dev),!missing")
    assert [c.metadata.name for c in listed.items] == ["a", "b"]


def test_field_selectors_on_name_and_namespace(core):
    core.create_namespaced_config_map("default", configmap("a"))
    core.create_namespaced_config_map("default", configmap("b"))
    core.create_namespaced_config_map("other", configmap("a"))
    by_name = core.list_config_map_for_all_namespaces(field_selector="metadata.name=a")
    assert {(c.metadata.namespace, c.metadata.name) for c in by_name.items} == {
        ("default", "a"),
        ("other", "a"),
    }
    by_ns = core.list_config_map_for_all_namespaces(
        field_selector="metadata.namespace!=default,metadata.name==a"
    )
    assert [(c.metadata.namespace, c.metadata.name) for c in by_ns.items] == [("other", "a")]


def test_an_unsupported_field_selector_is_400(core):
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_config_map("default", field_selector="spec.foo=bar")
    assert exc.value.status == 400


def test_a_malformed_label_selector_is_rejected():
    with pytest.raises(ApiError):
        label_predicate("a in (b")
