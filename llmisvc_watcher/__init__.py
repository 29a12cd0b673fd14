"""``llmisvc-router watch``: the watcher that turns cluster changes into workflow signals.

Modules: :mod:`llmisvc_watcher.model` (plain values), :mod:`llmisvc_watcher.mapping` (pure: which services an
event affects, spec 1.8), :mod:`llmisvc_watcher.coalescing` (one signal per burst),
:mod:`llmisvc_watcher.signaller` (Temporal) and :mod:`llmisvc_watcher.runner` (assembly); the subcommand is
``llmisvc_router.watch_command``. The list+watch loops are the cluster cache's (:mod:`llmisvc_cache`); no
watcher module imports the ``kubernetes`` client.
"""
