"""The router rules of KServe's LLMInferenceService as pure functions: no I/O, no clock, no environment.

This package is what ``llmisvc-router plan`` runs, what the Temporal activities call for every
decision, and what the unit tests exercise directly. Time, settings and the cluster state come in as
arguments; the result of a pass is a plan (objects to apply and delete, the new status, an outcome).

Its parts are layered, each importing only those below it (import-linter contracts in pyproject.toml):
``planner`` (``plan_pass`` and the plan's types); the rules by step, ``pools``, ``urls`` and ``readiness``
over ``httproute``, ``checks`` and ``merge``; ``world`` (the snapshot a pass reads, its writes and
conditions); ``models``; ``gocompat`` (Go behaviour KServe's output depends on); ``naming``.
"""
