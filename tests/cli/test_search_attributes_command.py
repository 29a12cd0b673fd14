"""``register-search-attributes`` adds the workflows' search attributes once, then finds them there."""

from __future__ import annotations

import sys
from pathlib import Path

from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.testing import WorkflowEnvironment

from llmisvc_devstack.dev_command import search_attribute_flags
from llmisvc_router.search_attributes_command import register_search_attributes
from workflows import search_attributes

TEMPORAL = str(Path(sys.executable).parent / "temporal")


async def test_registering_twice_adds_the_attributes_once() -> None:
    async with await WorkflowEnvironment.start_local(dev_server_existing_path=TEMPORAL) as env:
        first = await register_search_attributes(env.client)
        second = await register_search_attributes(env.client)
        listed = await env.client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=env.client.namespace)
        )
    names = sorted(key.name for key in search_attributes.ALL)
    assert first == names
    assert second == []
    assert set(names) <= set(listed.custom_attributes)


def test_the_dev_server_registers_each_search_attribute_with_its_own_type() -> None:
    flags = search_attribute_flags()
    assert flags[1::2] == [
        "LlmisvcNamespace=Keyword",
        "LlmisvcName=Keyword",
        "LlmisvcRouterReady=Keyword",
        "LlmisvcOutcome=Keyword",
        "LlmisvcDrift=Int",
        "LlmisvcPassFailing=Bool",
        "LlmisvcCluster=Keyword",
    ]
    assert set(flags[::2]) == {"--search-attribute"}
