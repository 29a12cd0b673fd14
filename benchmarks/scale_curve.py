"""The cost curve of several ``bench_scale.py`` runs: one PNG of four panels against N (time to all and
half RouterReady in both modes, the worker's peak RSS, API requests per service, history per no-op pass)
and the runs side by side as one Markdown table.

    .venv/bin/python benchmarks/scale_curve.py scale-100.json scale-300.json scale-1000.json --png curve.png

Each JSON is one run's ``--json`` file; its ``services`` says N.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.scale_analysis import side_by_side

PANELS = (
    (
        "seconds to RouterReady",
        (
            ("temporal.seconds_all_ready", "all (Temporal)"),
            ("temporal.seconds_50", "half (Temporal)"),
            ("direct.seconds_all_ready", "all (direct loop)"),
        ),
    ),
    ("worker peak RSS (MiB)", (("worker_peak_rss_mib", "worker"),)),
    ("API requests per service", (("api_requests_per_service", "to converge"),)),
    ("history bytes per no-op pass", (("noop_pass.history_bytes", "one pass"),)),
)


def load(paths: list[Path]) -> list[dict[str, Any]]:
    runs = []
    for path in paths:
        run = json.loads(path.read_text())
        if not isinstance(run.get("services"), int):
            raise SystemExit(f"{path}: no 'services' count (written by bench_scale.py --json)")
        runs.append(run)
    return sorted(runs, key=lambda r: int(r["services"]))


def table(runs: list[dict[str, Any]]) -> str:
    return side_by_side([(int(r["services"]), r) for r in runs])


def draw(runs: list[dict[str, Any]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(9, 6.5))
    sizes = [int(r["services"]) for r in runs]
    for axis, (title, series) in zip(axes.flat, PANELS, strict=True):
        for key, label in series:
            points = [(n, r[key]) for n, r in zip(sizes, runs, strict=True) if r.get(key) is not None]
            if points:
                axis.plot(*zip(*points, strict=True), marker="o", label=label)
        axis.set_xscale("log")
        axis.set_xticks(sizes, [str(n) for n in sizes])
        axis.set_xlabel("services created at once (N)")
        axis.set_title(title, fontsize=10)
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
        if len(series) > 1:
            axis.legend(fontsize=8)
    figure.suptitle("llmisvc-router on the real control plane, 2 cores")
    figure.tight_layout()
    figure.savefig(png, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", type=Path, nargs="+", help="bench_scale.py --json files")
    parser.add_argument("--png", type=Path, help="draw the curve to this PNG file")
    args = parser.parse_args(argv)
    runs = load(args.runs)
    print(table(runs))
    if args.png:
        draw(runs, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
