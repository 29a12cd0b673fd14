"""Watch events and observed router status for the watcher tests, over the wire builders."""

from __future__ import annotations

from llmisvc_core.models import kube
from llmisvc_watcher.model import ADDED, WatchEvent
from tests.builders import Wire


def observed(*gateways: tuple[str | None, str], routes: list[tuple[str | None, str]] | None = None) -> Wire:
    """``status.router.gateways`` naming ``(namespace, name)`` gateways, each listing ``routes``."""
    items = []
    for namespace, name in gateways:
        item: Wire = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": name}
        if namespace is not None:
            item["namespace"] = namespace
        if routes:
            item["httpRoutes"] = [
                {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": n}
                | ({"namespace": ns} if ns is not None else {})
                for ns, n in routes
            ]
        items.append(item)
    return {"router": {"gateways": items}}


def event(obj_: Wire, type_: str = ADDED, *, old: Wire | None = None, initial: bool = False) -> WatchEvent:
    resource = kube.type_of(obj_["apiVersion"], obj_["kind"])
    assert resource is not None
    return WatchEvent(type_, resource, obj_, old, initial)
