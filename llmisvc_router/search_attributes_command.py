"""``llmisvc-router register-search-attributes``: add the workflows' custom search attributes to the
Temporal namespace (its ``--help`` is :data:`DESCRIPTION`)."""

from __future__ import annotations

import argparse
import asyncio

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_router.errors import CommandError
from llmisvc_runtime import exit_codes, temporal
from llmisvc_runtime.errors import first_line
from workflows import search_attributes

DESCRIPTION = """\
Add the workflows' custom search attributes (LlmisvcNamespace, LlmisvcName, LlmisvcRouterReady,
LlmisvcOutcome, LlmisvcDrift, LlmisvcPassFailing, LlmisvcCluster) to the Temporal namespace, so that
the Temporal UI can filter and show services by them. For a self-hosted Temporal; on Temporal Cloud
add them with tcld or the Cloud UI. Idempotent; deploy/ runs it as the watcher's init container.

examples:
  llmisvc-router register-search-attributes
  TEMPORAL_ADDRESS=temporal.example:7233 TEMPORAL_NAMESPACE=llm llmisvc-router register-search-attributes
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "register-search-attributes",
        help="add the workflows' search attributes to the Temporal namespace (idempotent)",
        description=DESCRIPTION,
        epilog=exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        added = asyncio.run(_register())
    except RPCError as err:
        raise CommandError(first_line(err), exit_codes.UNAVAILABLE) from err
    print("added: " + ", ".join(added) if added else "all search attributes were already registered")
    return 0


async def register_search_attributes(client: Client) -> list[str]:
    """Add the missing ones; returns their names."""
    existing = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace)
    )
    missing = {
        key.name: IndexedValueType.ValueType(key.indexed_value_type.value)
        for key in search_attributes.ALL
        if key.name not in existing.custom_attributes
    }
    if missing:
        try:
            await client.operator_service.add_search_attributes(
                AddSearchAttributesRequest(namespace=client.namespace, search_attributes=missing)
            )
        except RPCError as err:
            # Two watcher pods starting at once both register: the one that lost the race found them added.
            if err.status != RPCStatusCode.ALREADY_EXISTS:
                raise
            return []
    return sorted(missing)


async def _register() -> list[str]:
    return await register_search_attributes(await temporal.connect())
