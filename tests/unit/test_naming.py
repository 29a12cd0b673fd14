"""Derived names: knative's ChildName (Appendix A, edge case 78)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest

from llmisvc_core import naming

LONG_NAME = "facebook-opt-125m-single-simulated-with-a-very-long-name-x"


def _md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


@pytest.mark.parametrize(
    ("parent", "suffix", "expected"),
    [
        ("my-llm", naming.ROUTE_SUFFIX, "my-llm-kserve-route"),
        ("b" * 50, naming.ROUTE_SUFFIX, "b" * 50 + "-kserve-route"),
        ("a" * 51, naming.ROUTE_SUFFIX, "a" * 18 + _md5("a" * 51) + "-kserve-route"),
        (LONG_NAME, naming.ROUTE_SUFFIX, "facebook-opt-125m-f72b7401af87bbe17e98c81391d543ec-kserve-route"),
        (LONG_NAME, naming.POOL_SUFFIX, "facebook-opt-125f72b7401af87bbe17e98c81391d543ec-inference-pool"),
        (
            LONG_NAME,
            naming.EPP_SERVICE_SUFFIX,
            "facebook-opt-125m-sf72b7401af87bbe17e98c81391d543ec-epp-service",
        ),
    ],
    ids=[
        "short-name-appended",
        "exactly-63-not-hashed",
        "64-hashed-with-parent-md5",
        "edge-78-route",
        "edge-78-pool",
        "edge-78-epp-service",
    ],
)
def test_appendix_a_edge_78_child_name(parent: str, suffix: str, expected: str) -> None:
    assert naming.child_name(parent, suffix) == expected


def test_appendix_a_hashed_names_are_63_bytes_and_keep_a_trailing_dash() -> None:
    # The truncated prefix is not cleaned: "facebook-opt-125m-" ends in "-" right before the hash.
    name = naming.child_name(LONG_NAME, naming.ROUTE_SUFFIX)

    assert len(name) == 63
    assert name.startswith("facebook-opt-125m-f72b")


@pytest.mark.parametrize(
    ("derive", "expected"),
    [
        (naming.route_name, "my-llm-kserve-route"),
        (naming.pool_name, "my-llm-inference-pool"),
        (naming.epp_service_name, "my-llm-epp-service"),
        (naming.epp_service_account_name, "my-llm-epp-sa"),
        (naming.scheduler_name, "my-llm-kserve-router-scheduler"),
        (naming.workload_service_name, "my-llm-kserve-workload-svc"),
    ],
    ids=["route", "pool", "epp-service", "epp-service-account", "scheduler", "workload-service"],
)
def test_derived_names_are_kserve_child_names_of_the_service(
    derive: Callable[[str], str], expected: str
) -> None:
    assert derive("my-llm") == expected
    assert derive(LONG_NAME) == naming.child_name(LONG_NAME, expected.removeprefix("my-llm"))


def test_part_of_label_selects_kserve_llminferenceservice_objects() -> None:
    assert naming.PART_OF_SELECTOR == "app.kubernetes.io/part-of=llminferenceservice"
    assert naming.is_part_of({"app.kubernetes.io/part-of": "llminferenceservice", "x": "y"})
    assert not naming.is_part_of({"app.kubernetes.io/part-of": "something-else"})
    assert not naming.is_part_of(None)
