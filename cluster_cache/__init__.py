"""The cluster cache: informer-style list+watch loops over what a pass reads, shared by the worker's
activities and the watcher.

Modules: :mod:`cluster_cache.model` (plain values: targets, events, versions seen, tuning),
:mod:`cluster_cache.store` (one loop's objects, thread-safe), :mod:`cluster_cache.watch_loop` (the loops;
the only module here importing the ``kubernetes`` client), :mod:`cluster_cache.targets` (which
collections, with which selectors) and :mod:`cluster_cache.cache` (reads, the write overlay, freshness).
"""
