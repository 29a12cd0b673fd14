"""The chaos suite (make chaos): every scenario against the real processes, a JSON report, a table.

    .venv/bin/python -m benchmarks.chaos.run [--scale full|reduced] [--only NAME ...] [--json FILE]

Each scenario is a function of the run's context that returns its measured values and, per target, a
pass or a fail; an exception in one is recorded as its error and the run goes on. Exit status 0 when
every target was met, 1 otherwise (the table says which), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from benchmarks.chaos import (
    scenarios_controlplane,
    scenarios_crash,
    scenarios_faults,
    scenarios_history,
    scenarios_input,
    scenarios_ownership,
)
from benchmarks.chaos.context import SCALES, Context
from benchmarks.chaos.report import Result, table, write_json

Scenario = Callable[[Context], Result]

#: In the order they run (on one control plane; the malformed services come last).
SCENARIOS: dict[str, Scenario] = {
    "api_faults_10": scenarios_faults.api_faults_10,
    "api_faults_30": scenarios_faults.api_faults_30,
    "watch_cuts": scenarios_faults.watch_cuts,
    "watch_gone": scenarios_controlplane.watch_gone,
    "crd_removal": scenarios_faults.crd_removal,
    "apiserver_sigkill": scenarios_controlplane.apiserver_sigkill,
    "etcd_sigkill": scenarios_controlplane.etcd_sigkill,
    "rbac_revoked": scenarios_controlplane.rbac_revoked,
    "worker_sigkill": scenarios_crash.worker_sigkill,
    "temporal_restart": scenarios_crash.temporal_restart,
    "one_of_two_killed": scenarios_crash.one_of_two_killed,
    "foreign_route": scenarios_ownership.foreign_route,
    "replaced_route": scenarios_ownership.replaced_route,
    "recreated_service": scenarios_ownership.recreated_service,
    "fuzzed_signals": scenarios_input.fuzzed_signals,
    "history_secrets": scenarios_history.history_secrets,
    "malformed_services": scenarios_input.malformed_services,
}


def run_one(ctx: Context, name: str) -> Result:
    started = time.monotonic()
    try:
        result = SCENARIOS[name](ctx)
    except Exception as exc:  # one scenario's crash is its own failure, not the run's
        result = Result(name, "crashed", error=f"{type(exc).__name__}: {exc}")
        traceback.print_exc()
    result.seconds = round(time.monotonic() - started, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chaos", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scale", choices=sorted(SCALES), default="full", help="full (50 services) or reduced (10)"
    )
    parser.add_argument(
        "--only", action="append", choices=sorted(SCENARIOS), help="run only this scenario (repeatable)"
    )
    parser.add_argument(
        "--json", type=Path, default=Path("test-artifacts/chaos-report.json"), help="the JSON report"
    )
    parser.add_argument("--workdir", type=Path, help="logs and db files (default: a new temporary directory)")
    parser.add_argument(
        "--share",
        action="store_true",
        help="one set of workers and watchers for all scenarios, each in a namespace (as make test)",
    )
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="chaos-"))
    ctx = Context(workdir, SCALES[args.scale], share=args.share)
    print(f"chaos: scale {args.scale}, logs in {workdir}", flush=True)
    results = []
    try:
        for name in args.only or list(SCENARIOS):
            print(f"chaos: {name} ...", flush=True)
            result = run_one(ctx, name)
            results.append(result)
            verdict = "PASS" if result.passed else "FAIL: " + "; ".join(result.failures())
            print(f"chaos: {name} {result.seconds:.0f}s {verdict}", flush=True)
    finally:
        ctx.close()
    write_json(args.json, args.scale, results)
    print(table(results))
    print(f"report: {args.json}")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
