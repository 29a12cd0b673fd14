"""The re-evaluation triggers (spec 1.8): which LLMInferenceServices a change of the cluster affects.
Pure: no I/O.

Modules: :mod:`~llmisvc_core.triggers.change` (what the rules read: a change, the indexed cluster),
:mod:`~llmisvc_core.triggers.uses` (what one service uses: the one answer, read as the planner reads it,
that the cache indexes), :mod:`~llmisvc_core.triggers.configs`, :mod:`~llmisvc_core.triggers.groups` and
:mod:`~llmisvc_core.triggers.model_names` (the rules of configs, routing groups and shared model names)
and :mod:`~llmisvc_core.triggers.rules` (every rule, by kind). The watcher (``llmisvc_watcher``) applies
them to the process's cluster cache.
"""
