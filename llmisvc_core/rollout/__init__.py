"""Progressive rollouts of a routing group (issue 22): the plan, the weights of each step, the gates and
the decision that moves a rollout on. Pure rules: no I/O, no clock (durations and observations come in as
arguments), so the rollout workflow can call them directly and the tests hit them as tables."""
