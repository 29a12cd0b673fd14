"""What a scenario returns, the JSON report and the summary table."""

from __future__ import annotations

import json
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Check:
    """One target: what was measured against what was wanted."""

    name: str
    measured: Any
    target: str
    passed: bool


@dataclass
class Result:
    scenario: str
    description: str
    checks: list[Check] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.checks) and all(c.passed for c in self.checks)

    def check(self, name: str, measured: Any, target: str, passed: bool) -> bool:
        self.checks.append(Check(name, measured, target, bool(passed)))
        return bool(passed)

    def failures(self) -> list[str]:
        lines = [f"{c.name}: {c.measured} (target {c.target})" for c in self.checks if not c.passed]
        return lines + ([f"error: {self.error}"] if self.error else [])


def write_json(path: Path, scale: str, results: list[Result]) -> None:
    document = {
        "scale": scale,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"python": platform.python_version(), "machine": platform.machine()},
        "passed": all(r.passed for r in results),
        "scenarios": [{**asdict(r), "passed": r.passed} for r in results],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    if value is None:
        return "none"
    return str(value)


def table(results: list[Result]) -> str:
    """One row per check: scenario, check, measured, target, PASS/FAIL."""
    rows = [("scenario", "check", "measured", "target", "result")]
    for r in results:
        for c in r.checks:
            rows.append((r.scenario, c.name, _fmt(c.measured), c.target, "PASS" if c.passed else "FAIL"))
        if r.error:
            rows.append((r.scenario, "error", r.error[:60], "-", "FAIL"))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    passed = sum(r.passed for r in results)
    lines.append(f"\n{passed}/{len(results)} scenarios met every target")
    return "\n".join(lines)
