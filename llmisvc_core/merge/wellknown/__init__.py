"""KServe's well-known LLMInferenceServiceConfigs, as shipped in ``config/llmisvcconfig/`` (vendored data).

The YAML files next to this module are copied unchanged from kserve/kserve at commit
:data:`PRESETS_COMMIT`, except those named in :data:`KSERVE_COMMIT_BY_FILE`, copied at another commit
(Apache License 2.0, see ``LICENSE`` and ``README.md`` here). They are the fallback
of the configuration merge when a well-known config exists neither in the service's namespace nor in
the system namespace, and what the dev stack installs. Reading them is reading the package's own data,
not the cluster or the environment, so the pure core may do it; they are loaded on first use.
"""

from __future__ import annotations

import copy
import functools
from importlib import resources
from typing import Any

import yaml

#: The KServe commit the router's rules follow, with PR #6174 on top (issue 23, docs/deviations.md).
TARGET_COMMIT = "aaac4e294"
#: The commit of KServe's router reconciler the project was seeded from; its rules are kept wherever
#: upstream did not change them by :data:`TARGET_COMMIT`.
SEED_COMMIT = "6c74cae8d"
#: The commit of ``config/llmisvcconfig/`` every shipped config is copied from (the target of issue 23:
#: the 12-rule route preset of #5822/#5826, the tokenizer preset of #5712, the scheduler without its
#: in-pod UDS tokenizer).
PRESETS_COMMIT = "aaac4e294"
#: Files copied at another commit than :data:`PRESETS_COMMIT` (none at present).
KSERVE_COMMIT_BY_FILE: dict[str, str] = {}
KSERVE_PATH = "config/llmisvcconfig"
DEFAULT_PREFIX = "kserve-"


@functools.cache
def _shipped() -> dict[str, dict[str, Any]]:
    """The shipped configs by their name without the ``kserve-`` prefix (``config-llm-…``)."""
    found: dict[str, dict[str, Any]] = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            doc = yaml.safe_load(entry.read_text(encoding="utf-8"))
            name = str(doc["metadata"]["name"]).removeprefix(DEFAULT_PREFIX)
            found[name] = doc
    return found


def shipped_spec(name: str, prefix: str) -> dict[str, Any] | None:
    """The spec of the shipped config called ``name`` under ``prefix``, or None if KServe ships none."""
    if not name.startswith(prefix):
        return None
    doc = _shipped().get(name.removeprefix(prefix))
    return copy.deepcopy(doc["spec"]) if doc is not None else None


def shipped_configs(prefix: str, namespace: str) -> list[dict[str, Any]]:
    """Every shipped config as an object to install in ``namespace`` under ``prefix``."""
    configs = []
    for name, doc in _shipped().items():
        obj = copy.deepcopy(doc)
        obj["metadata"] = {"name": prefix + name, "namespace": namespace}
        configs.append(obj)
    return configs
