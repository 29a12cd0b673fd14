"""Processes die: a worker SIGKILLed during passes, the Temporal server SIGKILLed and restarted on its
db file, and one of two workers and one of two watchers SIGKILLed for good."""

from __future__ import annotations

import random
import time

from benchmarks.chaos.context import Context
from benchmarks.chaos.report import Result
from benchmarks.chaos.scenarios_faults import RECOVERY, check_ownership, names
from benchmarks.chaos.stack import READY_LINES


def worker_sigkill(ctx: Context) -> Result:
    kills = ctx.scale.kills
    result = Result(
        "worker_sigkill",
        f"a worker (of two, in turn) SIGKILLed {kills} times during passes, restarted at once",
    )
    with ctx.stack("worker-sigkill") as stack:
        fleet = stack.fleet
        fleet.create(names("svc", ctx.scale.services))
        fleet.wait_converged(timeout=ctx.scale.timeout)
        rng = random.Random(7)
        for i in range(kills):
            fleet.bump(tag=f"kill{i}")  # every service has a pass to run
            time.sleep(rng.uniform(0.2, 1.2))  # ... and is in the middle of it
            worker = stack.workers[i % len(stack.workers)]
            worker.kill()
            worker.start()  # as a Deployment would restart it
            if i < kills - 1:
                worker.wait_for_line(READY_LINES["worker"])
        restarted = time.monotonic()
        settled = fleet.wait_converged(timeout=ctx.scale.recovery_timeout, since=restarted)
        result.measured.update(kills=kills, seconds_after_last_kill=settled)
        result.check(
            f"converged after the last of {kills} kills (s)",
            settled,
            f"≤ {RECOVERY:.0f}",
            settled is not None and settled <= RECOVERY,
        )
        check_ownership(result, stack)
    return result


def temporal_restart(ctx: Context) -> Result:
    result = Result(
        "temporal_restart", "the Temporal server SIGKILLed during passes, restarted on its db file"
    )
    with ctx.stack("temporal-restart", own_temporal=True) as stack:
        fleet, temporal = stack.fleet, stack.temporal
        fleet.create(names("svc", ctx.scale.services))
        fleet.wait_converged(timeout=ctx.scale.timeout)
        fleet.bump(tag="before-kill")
        time.sleep(0.5)
        temporal.proc.kill()
        time.sleep(2.0)
        temporal.start()  # the same port and db file
        restarted = time.monotonic()
        settled = fleet.wait_converged(timeout=ctx.scale.recovery_timeout, since=restarted)
        alive = [p.name for p in (*stack.workers, *stack.watchers) if p.alive()]
        result.measured.update(seconds_after_restart=settled, product_processes_alive=alive)
        result.check(
            "converged after the restart (s)",
            settled,
            f"≤ {RECOVERY:.0f}",
            settled is not None and settled <= RECOVERY,
        )
        expected = len(stack.workers) + len(stack.watchers)
        result.check("workers and watchers still running", len(alive), f"{expected}", len(alive) == expected)
        check_ownership(result, stack)
    return result


def one_of_two_killed(ctx: Context) -> Result:
    result = Result(
        "one_of_two_killed", "of two workers and two watchers, one of each SIGKILLed during passes"
    )
    with ctx.stack("one-of-two") as stack:
        fleet = stack.fleet
        fleet.create(names("svc", ctx.scale.services))
        time.sleep(1.0)  # the first passes are running on both workers
        stack.workers[0].kill()
        stack.watchers[0].kill()
        killed = time.monotonic()
        settled = fleet.wait_converged(timeout=ctx.scale.recovery_timeout, since=killed)
        edited = time.monotonic()
        fleet.bump(tag="after-kill")  # only the surviving watcher can notice, only one worker can act
        followed = fleet.wait_converged(timeout=ctx.scale.recovery_timeout, since=edited)
        result.measured.update(seconds_after_kill=settled, seconds_to_follow_an_edit=followed)
        result.check(
            "converged after the kill (s)",
            settled,
            f"≤ {RECOVERY:.0f}",
            settled is not None and settled <= RECOVERY,
        )
        result.check(
            "an edit afterwards converged (s)",
            followed,
            f"≤ {RECOVERY:.0f}",
            followed is not None and followed <= RECOVERY,
        )
        check_ownership(result, stack)
    return result
