"""``llmisvc-router watch``: the watcher that turns cluster changes into workflow signals.

Modules: :mod:`watcher.model` (plain values), :mod:`watcher.mapping` (pure: which services an event
affects, spec 1.8), :mod:`watcher.coalescing` (one signal per burst), :mod:`watcher.signaller`
(Temporal) and :mod:`watcher.runner` (assembly); the subcommand is ``llmisvc_router.watch_command``.
The list+watch loops are the cluster cache's (:mod:`cluster_cache`); no watcher module imports the
``kubernetes`` client.
"""
