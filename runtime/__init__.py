"""What every llmisvc-router process starts with, the same for the worker, the watcher and the command
line: the environment's settings (:mod:`runtime.environment`), logs (:mod:`runtime.logs`), traces and
the metrics endpoint (:mod:`runtime.telemetry`), the Temporal connection (:mod:`runtime.temporal`), the
Kubernetes connection (:mod:`runtime.kube`) and SIGINT/SIGTERM (:mod:`runtime.signals`).

Whatever keeps a process from starting is a :class:`~runtime.errors.StartupError`: one line saying
what to change, with the exit status of its class (:mod:`runtime.exit_codes`), caught once by the
command line (``llmisvc_router.cli``). The settings model is ``worker.settings.OrchestratorSettings``.

Below the worker, the watcher and the command line, above the workflows, activities and the core: none
of those three import each other for what they share.
"""
