"""Temporal activities: thin, idempotent I/O around the pure core.

Each activity takes one input model and returns one result model. Decisions are made by ``llmisvc_core``;
the activities only read and write the cluster (through ``llmisvc_kube``, the one package that imports
the ``kubernetes`` client) and translate API outcomes (``errors``), so workflow code can import the
activity definitions without that client.
"""
