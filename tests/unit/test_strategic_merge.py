"""The strategic merge of specs, table-driven from the cases of KServe's ``config_merge_test.go``
(``TestMergeSpecs`` at 6c74cae8d), plus a property test: merging is deterministic and an empty layer
(an empty baseRef) changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmisvc_core.gocompat.strategic_merge import MergeError, merge, merge_specs

Wire = dict[str, Any]

CASES: list[tuple[str, list[Wire], Wire]] = [
    ("no configs", [], {}),
    ("single config", [{"model": {"uri": "model-a"}}], {"model": {"uri": "model-a"}}),
    (
        "two configs simple merge with sub-field override",
        [
            {"model": {"uri": "model-a"}, "router": {"route": {}, "gateway": {}, "scheduler": {}}},
            {
                "model": {"uri": "model-a"},
                "router": {"scheduler": {"pool": {"spec": {"targetPorts": [{"number": 9999}]}}}},
            },
        ],
        {
            "model": {"uri": "model-a"},
            "router": {
                "route": {},
                "gateway": {},
                "scheduler": {"pool": {"spec": {"targetPorts": [{"number": 9999}]}}},
            },
        },
    ),
    (
        "two configs with override",
        [{"model": {"uri": "model-a"}, "replicas": 1}, {"model": {"uri": "model-b"}, "replicas": 2}],
        {"model": {"uri": "model-b"}, "replicas": 2},
    ),
    (
        "deep merge with podspec template: containers by name, tolerations replaced",
        [
            {
                "replicas": 1,
                "template": {
                    "initContainers": [
                        {
                            "name": "storage-initializer",
                            "image": "si",
                            "resources": {"requests": {"storage": "1Mi"}},
                        }
                    ],
                    "containers": [
                        {
                            "name": "kserve-container",
                            "image": "base:0.1",
                            "resources": {"requests": {"cpu": "1"}},
                        }
                    ],
                    "tolerations": [{"key": "team", "operator": "Equal", "value": "a"}],
                },
            },
            {
                "replicas": 2,
                "template": {
                    "initContainers": [
                        {"name": "storage-initializer", "resources": {"requests": {"storage": "1Gi"}}}
                    ],
                    "containers": [
                        {
                            "name": "kserve-container",
                            "image": "override:1.0",
                            "env": [{"name": "FOO", "value": "bar"}],
                            "resources": {"requests": {"cpu": "2"}},
                        },
                        {"name": "transformer", "image": "transformer:latest"},
                    ],
                    "tolerations": [{"key": "gpu", "operator": "Exists"}],
                    "priorityClassName": "high-priority",
                },
            },
        ],
        {
            "replicas": 2,
            "template": {
                "initContainers": [
                    {
                        "name": "storage-initializer",
                        "image": "si",
                        "resources": {"requests": {"storage": "1Gi"}},
                    }
                ],
                "containers": [
                    {
                        "name": "kserve-container",
                        "image": "override:1.0",
                        "resources": {"requests": {"cpu": "2"}},
                        "env": [{"name": "FOO", "value": "bar"}],
                    },
                    {"name": "transformer", "image": "transformer:latest"},
                ],
                "tolerations": [{"key": "gpu", "operator": "Exists"}],
                "priorityClassName": "high-priority",
            },
        },
    ),
    (
        "merge LoRA adapters: a list without merge key is replaced",
        [
            {"model": {"uri": "base-model", "lora": {"adapters": [{"uri": "lora-model"}]}}},
            {"model": {"lora": {"adapters": [{"uri": "lora-model2"}]}}},
        ],
        {"model": {"uri": "base-model", "lora": {"adapters": [{"uri": "lora-model2"}]}}},
    ),
    (
        "merge baseRefs: replaced",
        [
            {"baseRefs": [{"name": "base-config-1"}, {"name": "base-config-2"}]},
            {"baseRefs": [{"name": "override-config-1"}]},
        ],
        {"baseRefs": [{"name": "override-config-1"}]},
    ),
    (
        "merge with nil pointer handling: an absent field keeps the base",
        [
            {"model": {"uri": "model-uri", "name": "base-name"}, "replicas": 1},
            {"model": {"name": None}, "replicas": 3},
        ],
        {"model": {"uri": "model-uri", "name": "base-name"}, "replicas": 3},
    ),
    (
        "merge complex nested structures",
        [
            {
                "model": {"name": "base-name"},
                "parallelism": {"tensor": 2},
                "router": {"gateway": {"refs": [{"name": "base-gw"}]}},
            },
            {
                "model": {"name": "override-name"},
                "parallelism": {"pipeline": 4},
                "router": {"route": {"http": {"refs": [{"name": "r"}]}}},
            },
        ],
        {
            "model": {"name": "override-name"},
            "parallelism": {"tensor": 2, "pipeline": 4},
            "router": {
                "gateway": {"refs": [{"name": "base-gw"}]},
                "route": {"http": {"refs": [{"name": "r"}]}},
            },
        },
    ),
    ("merge with zero values vs nil pointers", [{"replicas": 0}, {"replicas": None}], {"replicas": 0}),
    (
        "merge pod spec with empty containers: an empty list keeps the base's",
        [
            {
                "template": {
                    "containers": [{"name": "busybox", "image": "busybox"}],
                    "volumes": [{"name": "vol1"}],
                },
                "replicas": 1,
            },
            {"template": {"containers": []}},
        ],
        {
            "template": {
                "containers": [{"name": "busybox", "image": "busybox"}],
                "volumes": [{"name": "vol1"}],
            },
            "replicas": 1,
        },
    ),
    (
        "merge pod spec, add container: new containers come first",
        [
            {
                "template": {
                    "containers": [{"name": "busybox", "image": "busybox"}],
                    "initContainers": [{"name": "sidecar"}],
                }
            },
            {"template": {"containers": [{"name": "busybox-2", "image": "busybox-2"}], "initContainers": []}},
            {},
        ],
        {
            "template": {
                "containers": [
                    {"name": "busybox-2", "image": "busybox-2"},
                    {"name": "busybox", "image": "busybox"},
                ],
                "initContainers": [{"name": "sidecar"}],
            }
        },
    ),
    (
        "custom pool selector merge base selector: maps merge key by key",
        [
            {
                "router": {
                    "scheduler": {"pool": {"spec": {"selector": {"matchLabels": {"a": "1", "b": "2"}}}}}
                }
            },
            {
                "router": {
                    "scheduler": {"pool": {"spec": {"selector": {"matchLabels": {"b": "3", "c": "4"}}}}}
                }
            },
        ],
        {
            "router": {
                "scheduler": {"pool": {"spec": {"selector": {"matchLabels": {"a": "1", "b": "3", "c": "4"}}}}}
            }
        },
    ),
    (
        "scheduler template: a container merges ports by containerPort and env by name",
        [
            {
                "router": {
                    "scheduler": {
                        "template": {
                            "containers": [
                                {
                                    "name": "main",
                                    "ports": [{"containerPort": 9002, "name": "grpc"}],
                                    "env": [{"name": "A", "value": "1"}],
                                }
                            ]
                        }
                    }
                }
            },
            {
                "router": {
                    "scheduler": {
                        "template": {
                            "containers": [
                                {
                                    "name": "main",
                                    "ports": [
                                        {"containerPort": 9002, "protocol": "TCP"},
                                        {"containerPort": 7000},
                                    ],
                                    "env": [{"name": "B", "value": "2"}],
                                }
                            ]
                        }
                    }
                }
            },
        ],
        {
            "router": {
                "scheduler": {
                    "template": {
                        "containers": [
                            {
                                "name": "main",
                                "ports": [
                                    {"containerPort": 9002, "name": "grpc", "protocol": "TCP"},
                                    {"containerPort": 7000},
                                ],
                                "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}],
                            }
                        ]
                    }
                }
            }
        },
    ),
    (
        "volumes retain keys: the override's volume source replaces the base's",
        [
            {"template": {"volumes": [{"name": "v", "secret": {"secretName": "s"}}]}},
            {"template": {"volumes": [{"name": "v", "emptyDir": {}}]}},
        ],
        {"template": {"volumes": [{"name": "v", "emptyDir": {}}]}},
    ),
    (
        "route rules have no merge key: replaced whole",
        [
            {
                "router": {
                    "route": {"http": {"spec": {"rules": [{"name": "a"}, {"name": "b"}], "hostnames": ["x"]}}}
                }
            },
            {"router": {"route": {"http": {"spec": {"rules": [{"name": "c"}]}}}}},
        ],
        {"router": {"route": {"http": {"spec": {"rules": [{"name": "c"}], "hostnames": ["x"]}}}}},
    ),
]


@pytest.mark.parametrize(("cfgs", "want"), [(c, w) for _, c, w in CASES], ids=[n for n, _, _ in CASES])
def test_merge_specs_as_kserve_merges_them(cfgs: list[Wire], want: Wire) -> None:
    assert merge_specs(*cfgs) == want


def test_base_only_items_keep_their_place_before_later_patched_items() -> None:
    base = {"template": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}
    override = {"template": {"containers": [{"name": "x"}, {"name": "c", "image": "i"}]}}
    names = [c["name"] for c in merge(base, override)["template"]["containers"]]
    assert names == ["x", "a", "b", "c"]


def test_an_item_without_its_merge_key_is_an_error() -> None:
    with pytest.raises(MergeError, match="merge key 'name'"):
        merge({"template": {"containers": [{"name": "a"}]}}, {"template": {"containers": [{"image": "i"}]}})


def test_merge_does_not_modify_its_inputs() -> None:
    base = {"template": {"containers": [{"name": "a", "env": [{"name": "X"}]}]}}
    override = {"template": {"containers": [{"name": "a", "env": [{"name": "Y"}]}]}}
    before = (repr(base), repr(override))
    merge(base, override)
    assert (repr(base), repr(override)) == before


_names = st.sampled_from(["a", "b", "c", "main"])
_scalars = st.one_of(st.integers(0, 3), st.sampled_from(["x", "y", ""]), st.booleans())
_containers = st.lists(
    st.fixed_dictionaries(
        {"name": _names},
        optional={
            "image": _scalars,
            "env": st.lists(
                st.fixed_dictionaries({"name": _names}), unique_by=lambda e: e["name"], max_size=3
            ),
        },
    ),
    unique_by=lambda c: str(c["name"]),
    max_size=4,
)
_specs = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(0, 5),
        "model": st.fixed_dictionaries({}, optional={"name": _scalars, "uri": _scalars}),
        "template": st.fixed_dictionaries(
            {},
            optional={
                "containers": _containers,
                "tolerations": st.lists(st.fixed_dictionaries({"key": _names}), max_size=2),
            },
        ),
        "router": st.fixed_dictionaries(
            {},
            optional={
                "route": st.just({}),
                "scheduler": st.fixed_dictionaries(
                    {}, optional={"template": st.fixed_dictionaries({}, optional={"containers": _containers})}
                ),
            },
        ),
    },
)


@settings(max_examples=150, deadline=None)
@given(layers=st.lists(_specs, min_size=1, max_size=4))
def test_property_merge_is_deterministic_and_an_empty_baseref_changes_nothing(layers: list[Wire]) -> None:
    merged = merge_specs(*layers)
    assert merge_specs(*layers) == merged
    # An empty config (an empty baseRef) anywhere after the first layer changes nothing.
    for position in range(1, len(layers) + 1):
        assert merge_specs(*layers[:position], {}, *layers[position:]) == merged
