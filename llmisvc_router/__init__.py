"""The ``llmisvc-router`` command line: entry points that only wire settings to the core and services."""
