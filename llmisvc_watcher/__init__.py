"""``llmisvc-router watch``: the watcher that turns cluster changes into workflow signals.

Modules: :mod:`llmisvc_watcher.model` (plain values), :mod:`llmisvc_watcher.coalescing` (one signal per
burst), :mod:`llmisvc_watcher.signaller` (Temporal) and :mod:`llmisvc_watcher.runner` (assembly); the
subcommand is ``llmisvc_router.watch_command``. Which services an event affects is the core's
(:mod:`llmisvc_core.triggers`, spec 1.8), read through the cluster cache (:mod:`llmisvc_cache`), whose
list+watch loops the watcher starts; no watcher module imports the ``kubernetes`` client.
"""
