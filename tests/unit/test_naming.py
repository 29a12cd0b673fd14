"""Derived names: knative's ChildName (Appendix A, edge case 78)."""

from __future__ import annotations

import hashlib

import pytest

from router_core import naming

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
