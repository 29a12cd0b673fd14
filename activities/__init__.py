"""Temporal activities: thin, idempotent I/O around the pure core.

Each activity takes one input model and returns one result model. Decisions are made by ``llmisvc_core``;
the activities only read and write the cluster and translate API outcomes (``errors``). Only
``activities.kube_api`` imports the ``kubernetes`` client, so workflow code can import the activity
definitions without it.
"""
