"""The core's two roots of failure; every exception it raises for a caller to handle is one of them.

- :class:`InvalidInputError` (a ``ValueError``): what the core was given cannot be used as it is — a
  URL, label selector, template, ingress or router config, spec or rollout plan that does not parse,
  merge or validate. Whoever gave it must change it: the pass says so in a condition, a command refuses.
- :class:`StepFailedError`: a step of the pass could not do its work in this world — a write the rules
  refuse, a Gateway with no usable address, an InferencePool without target ports, a LoRA strategy that
  cannot be applied. ``planner.passes`` marks the step's condition with KServe's reason and ends the
  pass failed.
"""

from __future__ import annotations


class InvalidInputError(ValueError):
    """Input that cannot be used as it is; the message says which part and why."""


class StepFailedError(Exception):
    """A step of the pass failed; the message is the text KServe reports."""
