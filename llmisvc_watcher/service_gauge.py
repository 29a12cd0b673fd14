"""``llmisvc_router_services``: the LLMInferenceServices the watcher knows, by their ``RouterReady``
condition (``True``, ``False``, or ``Unknown`` when the router has not written one yet).

Counted from the services' events as they arrive: one service's event changes one count, so a start-up
list of thousands of services stays linear.
"""

from __future__ import annotations

from collections import Counter

from temporalio.common import MetricMeter

from llmisvc_core.models import kube
from llmisvc_core.triggers.change import Key
from llmisvc_watcher.model import DELETED, WatchEvent, Wire

SERVICES_METRIC = "llmisvc_router_services"
STATES = ("True", "False", "Unknown")


def router_ready(service: Wire) -> str:
    """The status of the service's ``RouterReady`` condition, read loosely (a malformed status is Unknown)."""
    for condition in (service.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "RouterReady":
            status = condition.get("status")
            return status if status in ("True", "False") else "Unknown"
    return "Unknown"


class ServiceGauge:
    def __init__(self, meter: MetricMeter) -> None:
        self._gauge = meter.create_gauge(SERVICES_METRIC, "LLMInferenceServices by their RouterReady status")
        self._states: dict[Key, str] = {}
        self._counts: Counter[str] = Counter()
        self._publish()  # every state from the start, so a dashboard sees zeros rather than gaps

    def observe(self, event: WatchEvent) -> None:
        """Count the service's state as ``event`` leaves it."""
        if event.resource != kube.LLMISVC:
            return
        key = (event.namespace, event.name)
        before = self._states.pop(key, None)
        after = router_ready(event.obj) if event.type != DELETED else None
        if after is not None:
            self._states[key] = after
        if before == after:
            return
        if before is not None:
            self._counts[before] -= 1
        if after is not None:
            self._counts[after] += 1
        self._publish()

    def _publish(self) -> None:
        for state in STATES:
            self._gauge.set(self._counts[state], {"router_ready": state})
