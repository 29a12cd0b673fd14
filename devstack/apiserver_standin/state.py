"""What the stand-in's requests work on, in one object: the resource registry, the store, the fault
rules, the request counters, the watch settings and the stop flag, with the CRD installation the
control endpoint offers.

The server (:mod:`apiserver_standin.server`) composes it and hands it to the HTTP layer
(:mod:`apiserver_standin.http_server`) and the control endpoint (:mod:`apiserver_standin.control`),
which depend on it and not on the server or on each other: no import circle between them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from apiserver_standin.counters import RequestCounter
from apiserver_standin.errors import ApiError
from apiserver_standin.faults import FaultInjector
from apiserver_standin.registry import Registry, ResourceInfo
from apiserver_standin.store import Store
from apiserver_standin.watch_stream import WatchSettings
from llmisvc_devstack.controlplane import crds


@dataclass
class StandinState:
    registry: Registry
    store: Store
    faults: FaultInjector
    counter: RequestCounter
    watch_settings: WatchSettings
    stopping: threading.Event = field(default_factory=threading.Event)

    def info(self, group: str, plural: str) -> ResourceInfo:
        """A built-in resource (version v1) of the registry."""
        found = self.registry.lookup(group, "v1", plural)
        assert found is not None, f"{plural}.{group} is a built-in"
        return found

    def install_crd(self, manifest: dict[str, Any]) -> None:
        """Create (or replace) a CustomResourceDefinition object, which installs its resources."""
        info = self.info("apiextensions.k8s.io", "customresourcedefinitions")
        try:
            self.store.create(info, "", manifest)
        except ApiError as exc:
            if exc.code != 409:
                raise
            name = manifest["metadata"]["name"]
            current = self.store.get(info, "", name)
            body = {
                **manifest,
                "metadata": {
                    **manifest["metadata"],
                    "resourceVersion": current["metadata"]["resourceVersion"],
                },
            }
            self.store.update(info, "", name, body)

    def remove_crd(self, name: str) -> bool:
        """Delete a CustomResourceDefinition (and so every object of its resource); False if absent."""
        info = self.info("apiextensions.k8s.io", "customresourcedefinitions")
        try:
            self.store.delete(info, "", name)
        except ApiError as exc:
            if exc.code != 404:
                raise
            return False
        return True

    def install_crds(self, selection: str | Iterable[str] = "all") -> list[str]:
        """Install some of the project's CRDs (see :mod:`apiserver_standin.crds` for the selection syntax)."""
        specs = crds.select(selection)
        for spec in specs:
            self.install_crd(crds.manifest(spec))
        return [s.name for s in specs]

    def remove_crds(self, selection: str | Iterable[str] = "all") -> list[str]:
        return [s.name for s in crds.select(selection) if self.remove_crd(s.name)]
