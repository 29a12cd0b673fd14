"""What the Temporal UI shows of a rollout: its summary (set by the starter), its current details (where it
is, the weights, the gates, the timeline, as Markdown) and the descriptions of its updates and query."""

from __future__ import annotations

from activities.rollout_models import RolloutMembers
from llmisvc_core.rollout.plan import RolloutPlan
from workflows.rollout_models import RolloutStatus

PAUSE = (
    'Pause the rollout: no step is taken (a dwell stops counting) until `resume`. Argument: {"by": "who"}.'
)
RESUME = (
    "Resume a paused rollout. After a pause caused by someone else's edit of the weights, the rollout takes "
    'the weights as they are now and goes on from there. Argument: {"by": "who"}.'
)
PROMOTE = (
    'Give the candidate all the traffic now, skipping the remaining steps and gates. Argument: {"by": "who"}.'
)
ABORT = (
    "End the rollout and put back the weights it started from (left alone if someone else edited them). "
    'Argument: {"by": "who"}.'
)
STATUS = "Where the rollout is: its phase and reason, the step, the weights, the gates and the timeline."


def summary(members: RolloutMembers, plan: RolloutPlan) -> str:
    steps = " → ".join(f"{s.weight}%" for s in plan.steps)
    return f"rollout {members.namespace}/{members.group}: {members.stable} → {members.candidate}, {steps}"


def static_details(members: RolloutMembers) -> str:
    """The rollout's fixed Markdown details: what it is and how to drive it."""
    key = f"{members.namespace}/{members.group}"
    return "\n".join(
        [
            f"Moves routing group `{key}`'s traffic from `{members.stable}` to `{members.candidate}` step by "
            "step, writing only `spec.router.route.weight` (docs/rollouts.md).",
            "",
            f"- `llmisvc-router rollout status {key}`: where it is",
            f"- `llmisvc-router rollout pause|resume|promote|abort {key}`: steer it",
            f"- `kubectl describe llmisvc -n {members.namespace} {members.candidate}`: its Events",
            "- Updates: `pause`, `resume`, `promote`, `abort`; query: `status`.",
        ]
    )


def details(status: RolloutStatus) -> str:
    """The current details: Markdown, a few lines and two short tables."""
    lines = [
        f"**{status.phase.value}**: {status.reason or '—'}",
        "",
        f"step {status.step}/{len(status.steps)} ({' → '.join(f'{s}%' for s in status.steps)}); "
        + (status.weights.describe() if status.weights else "weights not read yet"),
    ]
    if status.gates:
        lines += ["", "| gate | state | detail |", "|---|---|---|"]
        lines += [f"| {g.name} | {g.state.value} | {g.message} |" for g in status.gates]
    if status.timeline:
        lines += ["", "| at | step | stable | candidate | note |", "|---|---|---|---|---|"]
        lines += [
            f"| {e.at:%H:%M:%S} | {e.step} | {e.weights.stable} | {e.weights.candidate} | {e.note} |"
            for e in status.timeline[-20:]
        ]
    return "\n".join(lines)
