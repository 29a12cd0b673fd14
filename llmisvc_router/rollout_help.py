"""The ``--help`` of ``llmisvc-router rollout`` and its actions: plain text, as a terminal shows it."""

from __future__ import annotations

HELP = "roll a routing group's traffic from one service to another, step by step, gated"
DESCRIPTION = """\
Move a routing group's traffic from its stable service to a candidate in steps (the candidate's share
of the pair's weight: 10% -> 50% -> 100%), dwelling at each, as one durable Temporal workflow per group
(llmisvc/[<cluster>/]<namespace>/rollout/<group>). Before each step, and every re-check while it dwells,
the gates are read: both services' RouterReady, WorkloadsReady and GroupReady, and optionally one
Prometheus value against a threshold. A failed gate rolls back; a weight edited by someone else
pauses the rollout, which never overwrites it. Only spec.router.route.weight is written.
Watch it with `kubectl describe llminferenceservice` (Events) or in the Temporal UI. docs/rollouts.md.
"""
ACTIONS = {
    "start": "start a rollout of the group (refused while one runs); prints its status",
    "status": "print the rollout's status: phase, step, weights, gates, timeline",
    "pause": "pause the rollout: no step is taken, the dwell stops counting",
    "resume": "resume a paused rollout (after an edit: from the weights as they are now)",
    "promote": "give the candidate all the traffic now, skipping the remaining steps",
    "abort": "end the rollout and put back the weights it started from",
}
_START = """\
A plan file holds the same fields as the flags:

  steps: [{weight: 10, dwell_seconds: 300}, {weight: 50, dwell_seconds: 600}, {weight: 100, dwell_seconds: 0}]
  gate_timeout_seconds: 300   # pending gates (a condition not True, no answer) roll back after this
  gate_recheck_seconds: 10
  rollback: last-good         # or stable: all the traffic back to the stable service
  total_weight: 100           # what the pair's weights add up to
  prometheus: {url: http://prometheus:9090, query: 'sum(rate(errors[5m]))', threshold: 0.05}

examples:
  llmisvc-router rollout start llm/llama --stable llama-v1 --candidate llama-v2 --steps 10,50,100 --dwell 5m
  llmisvc-router rollout start llm/llama --stable llama-v1 --candidate llama-v2 -f plan.yaml
  llmisvc-router rollout start llm/llama --stable llama-v1 --candidate llama-v2 --steps 25,100 \\
      --prometheus-url http://prometheus:9090 --query 'job:errors:ratio5m{model="llama-v2"}' --threshold 0.02
"""
EXAMPLES = {action: f"examples:\n  llmisvc-router rollout {action} llm/llama\n" for action in ACTIONS}
EXAMPLES["start"] = _START
EXAMPLES["status"] = (
    "examples:\n  llmisvc-router rollout status llm/llama\n"
    "  llmisvc-router rollout status llm/llama -o json\n"
)
