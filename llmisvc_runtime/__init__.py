"""What every llmisvc-router process starts with, the same for the worker, the watcher and the command
line: the environment's settings (:mod:`llmisvc_runtime.environment`), logs (:mod:`llmisvc_runtime.logs`),
traces and the metrics endpoint (:mod:`llmisvc_runtime.telemetry`), the Temporal connection
(:mod:`llmisvc_runtime.temporal`), the Kubernetes connection (:mod:`llmisvc_runtime.kube`) and SIGINT/SIGTERM
(:mod:`llmisvc_runtime.signals`).

Whatever keeps a process from starting is a :class:`~llmisvc_runtime.errors.StartupError`: one line saying
what to change, with the exit status of its class (:mod:`llmisvc_runtime.exit_codes`), caught once by the
command line (``llmisvc_router.cli``). Their settings, from the environment and the flags, are one model
(:mod:`llmisvc_runtime.settings`).

Below the worker, the watcher and the command line, above the workflows, activities and the core: none
of those three import each other for what they share.
"""
