"""Temporal workflows: orchestration only. One ``LLMInferenceServiceWorkflow`` per LLMInferenceService.

Workflow code never imports the ``kubernetes`` client (an import-linter contract checks it); every
decision is made by ``llmisvc_core`` inside activities.
"""
