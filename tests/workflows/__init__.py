"""Workflow tests: ``LLMInferenceServiceWorkflow`` on the time-skipping test server, with the cluster
faked in memory underneath the production activities."""
