"""The router rules of KServe's LLMInferenceService as pure functions: no I/O, no clock, no environment.

This package is what ``llmisvc-router plan`` runs, what the Temporal activities call for every
decision, and what the unit tests exercise directly. Time, settings and the cluster state come in as
arguments; the result of a pass is a plan (objects to apply and delete, the new status, an outcome).
"""
