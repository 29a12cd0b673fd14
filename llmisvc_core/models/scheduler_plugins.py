"""What the scheduler's (EPP) configuration asks for: the plugins it names (KServe ``tokenizer.go``,
``scheduler_latency_predictor.go`` and ``scheduler.go`` at ``aaac4e294``).

The configuration is read where KServe reads it: ``scheduler.config.inline``, else the value of a
``--config-text`` argument (any of the four spellings Go's flag package accepts) of the template's
``main`` container. A ``--config-file`` names a file the controller cannot see, so it counts as no
configuration; so does a value that is not a YAML/JSON object. A plugin is named when an item of the
top-level ``plugins`` list has that ``type``.

Two rules depend on it: which well-known configs the merge applies
(:func:`llmisvc_core.merge.config_merge.well_known_names`) and whether the service has a standalone
tokenizer (``TokenizerReady``, :mod:`llmisvc_core.pools.tokenizer`). Both work on the wire form of
``spec.router.scheduler``, before and after the merge alike.
"""

from __future__ import annotations

import itertools
from typing import Any

import yaml

TOKEN_PRODUCER = "token-producer"
#: The legacy monolithic plugin KServe decomposes (it still asks for the standalone tokenizer).
PRECISE_PREFIX_CACHE_SCORER = "precise-prefix-cache-scorer"
PREDICTED_LATENCY_PRODUCER = "predicted-latency-producer"

INLINE_CONFIG_FLAGS = frozenset({"--config-text", "-config-text", "--configText", "-configText"})
CONFIG_FLAGS = INLINE_CONFIG_FLAGS | {"--config-file", "-config-file", "--configFile", "-configFile"}
SCHEDULER_CONTAINER = "main"


def inline_config(scheduler: Any) -> Any:
    """The scheduler's inline configuration, parsed; None when there is none to read."""
    if not isinstance(scheduler, dict):
        return None
    config = scheduler.get("config")
    if isinstance(config, dict) and config.get("inline") is not None:
        return config["inline"]  # a YAML field of the CRD: already parsed, whatever its shape
    pair = _config_flag(scheduler.get("template"))
    if pair is None or pair[0] not in INLINE_CONFIG_FLAGS:
        return None
    try:
        return yaml.safe_load(pair[1])
    except yaml.YAMLError:
        return None


def has_plugin(scheduler: Any, plugin_type: str) -> bool:
    """The inline configuration lists a plugin of ``plugin_type``."""
    config = inline_config(scheduler)
    plugins = config.get("plugins") if isinstance(config, dict) else None
    if not isinstance(plugins, list):
        return False
    return any(isinstance(p, dict) and p.get("type") == plugin_type for p in plugins)


def is_tokenizer_enabled(scheduler: Any) -> bool:
    """KServe's ``isTokenizerEnabled``: ``scheduler.tokenizer`` is set (even ``{}``), or the configuration
    names ``token-producer`` or the legacy ``precise-prefix-cache-scorer``."""
    if not isinstance(scheduler, dict):
        return False
    if scheduler.get("tokenizer") is not None:
        return True
    return has_plugin(scheduler, TOKEN_PRODUCER) or has_plugin(scheduler, PRECISE_PREFIX_CACHE_SCORER)


def _config_flag(template: Any) -> tuple[str, str] | None:
    """The first config flag and its value among the args of the ``main`` container (only the first
    container of that name is looked at, as in Go)."""
    containers = template.get("containers") if isinstance(template, dict) else None
    for container in containers if isinstance(containers, list) else []:
        if not isinstance(container, dict) or container.get("name") != SCHEDULER_CONTAINER:
            continue
        args = container.get("args")
        args = args if isinstance(args, list) else []
        for flag, value in itertools.pairwise(args):
            if isinstance(flag, str) and flag in CONFIG_FLAGS:
                return flag, str(value)
        return None
    return None
