"""The top of the core: ``plan_pass`` runs the steps in KServe's order over a snapshot and returns a
plan; the plan's output types and its split into phases."""
