"""The cluster cache: informer-style list+watch loops over what a pass reads, shared by the worker's
activities and the watcher.

Modules: :mod:`llmisvc_cache.model` (plain values: targets, events, versions seen, tuning),
:mod:`llmisvc_cache.store` (one loop's objects, thread-safe), :mod:`llmisvc_cache.watch_loop` (the
loops, over :mod:`llmisvc_kube.stream`: no module here imports the ``kubernetes`` client),
:mod:`llmisvc_cache.targets` (which collections, with which selectors) and :mod:`llmisvc_cache.cache`
(reads, the write overlay, freshness).
"""
