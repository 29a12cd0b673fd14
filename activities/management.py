"""Which services this deployment manages and whether it writes: the worker's own settings, consulted by
every pass (so a restarted worker with other settings changes what the next pass of every running
workflow does, without restarting any workflow).

* **Mode.** ``write`` carries out the plan; ``shadow`` plans as usual and writes nothing (no object, no
  status, no Event), reporting the drift instead: what it would have written (``llmisvc_core.planner.drift``).
* **Selection.** A namespace list and a label selector. A pass whose service is outside them hands the
  service off: the workflow ends without writing anything, leaving the objects to whoever manages
  them now. The watcher applies the same selection to its watch, so a service outside it gets no
  workflow, and one that enters it gets one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from llmisvc_core.gocompat import label_selector
from llmisvc_core.gocompat.label_selector import LabelSelector


class Mode(StrEnum):
    WRITE = "write"
    SHADOW = "shadow"


@dataclass(frozen=True)
class Management:
    mode: Mode = Mode.WRITE
    selector: LabelSelector = field(default_factory=lambda: label_selector.parse(""))
    namespaces: tuple[str, ...] = ()  # empty: every namespace

    @classmethod
    def of(cls, mode: str, selector: str = "", namespaces: Sequence[str] = ()) -> Management:
        return cls(Mode(mode), label_selector.parse(selector), tuple(n for n in namespaces if n))

    @property
    def shadow(self) -> bool:
        return self.mode is Mode.SHADOW

    def handoff_reason(self, service: dict[str, Any]) -> str | None:
        """Why this deployment no longer manages ``service``, or None while it does."""
        meta = service.get("metadata") or {}
        where = f"{meta.get('namespace')}/{meta.get('name')}"
        if self.namespaces and meta.get("namespace") not in self.namespaces:
            return f"{where} is outside the managed namespaces ({', '.join(self.namespaces)})"
        if not self.selector.matches(service):
            return f"{where} no longer matches the service selector {self.selector.text!r}"
        return None
