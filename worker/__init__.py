"""The Temporal worker: its settings, the one worker factory (also used by the replay tests) and the worker
process. What it shares with the watcher and the command line (connections, telemetry, logs, signals)
is in :mod:`llmisvc_runtime`."""
