"""``llmisvc-router dev`` and its parts: the whole stack on one machine (Temporal dev server, the
Kubernetes control plane, the simulated controllers, the worker and the watcher). Registered as a
``llmisvc-router`` command through the ``llmisvc_router.commands`` entry-point group, so the command
exists only where this dev package is installed."""
