"""Reading a Grafana dashboard's PromQL: its queries and the metric names they use."""

from __future__ import annotations

import re
from typing import Any

_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LABELS = re.compile(r"\{[^}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
#: PromQL's functions, aggregations and keywords: identifiers that are not metric names.
KEYWORDS = {
    "sum",
    "rate",
    "irate",
    "increase",
    "histogram_quantile",
    "avg",
    "max",
    "min",
    "count",
    "topk",
    "bottomk",
    "clamp_min",
    "clamp_max",
    "abs",
    "delta",
    "deriv",
    "sort",
    "sort_desc",
    "label_replace",
    "and",
    "or",
    "unless",
    "offset",
    "bool",
    "le",
    "vector",
    "scalar",
    "time",
    "absent",
}


def queries(document: dict[str, Any]) -> list[str]:
    """Every ``expr`` of every target of every panel (rows' nested panels included)."""
    found: list[str] = []
    for panel in document.get("panels", []):
        for inner in [panel, *panel.get("panels", [])]:
            found += [t["expr"] for t in inner.get("targets", []) if t.get("expr")]
    return found


def metric_names(query: str) -> set[str]:
    text = _STRING.sub("", query)
    for pattern in (_LABELS, _RANGE, _GROUPING):
        text = pattern.sub(" ", text)
    names = set(_IDENT.findall(text)) - KEYWORDS
    return {name for name in names if not re.fullmatch(r"\d+[smhd]?", name) and not name.startswith("$")}
