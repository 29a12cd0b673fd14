"""LLMInferenceServiceConfig events signal the services that use the config (issue 9)."""

from __future__ import annotations

from llmisvc_core.models import kube
from tests.builders import KSERVE, Wire, service
from tests.builders.kube import obj
from tests.builders.watch import event
from tests.watcher.cluster import CacheWorld


def _world(*services: Wire) -> CacheWorld:
    return CacheWorld().put(*services)


def _keys(config_name: str, namespace: str, world: CacheWorld) -> list[tuple[str, str]]:
    return world.keys(event(obj(kube.LLMISVC_CONFIG, config_name, namespace)))


APPLIED = {
    "appliedConfigs": [{"name": "kserve-config-llm-router-route", "namespace": KSERVE, "source": "Preset"}]
}


def test_a_system_namespace_config_signals_the_services_that_applied_it_in_every_namespace() -> None:
    world = _world(
        service("a", "ns1", status=APPLIED),
        service("b", "ns2", status=APPLIED),
        service("c", "ns2", status={"appliedConfigs": [{"name": "other"}]}),
    )
    assert _keys("kserve-config-llm-router-route", KSERVE, world) == [("ns1", "a"), ("ns2", "b")]


def test_a_namespace_local_config_signals_only_the_services_of_its_namespace() -> None:
    world = _world(service("a", "ns1", status=APPLIED), service("b", "ns2", status=APPLIED))
    assert _keys("kserve-config-llm-router-route", "ns1", world) == [("ns1", "a")]


def test_a_base_ref_that_appears_signals_the_services_that_name_it() -> None:
    svc = service("a", "ns1")
    svc["spec"]["baseRefs"] = [{"name": "team"}]
    world = _world(svc, service("b", "ns1", status=APPLIED))
    assert _keys("team", "ns1", world) == [("ns1", "a")]


def test_before_any_merge_a_well_known_name_counts_as_used() -> None:
    world = _world(service("a", "ns1"))
    assert _keys("kserve-config-llm-scheduler", KSERVE, world) == [("ns1", "a")]
    assert _keys("kserve-config-llm-tokenizer", KSERVE, world) == [("ns1", "a")]  # KServe #5712
    assert _keys("unrelated", KSERVE, world) == []
