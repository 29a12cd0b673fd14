"""``llmisvc-router register-search-attributes``: add the workflows' custom search attributes to the
Temporal namespace (self-hosted Temporal; on Temporal Cloud use tcld or the Cloud UI). Idempotent."""

from __future__ import annotations

import argparse
import asyncio
import sys

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.service import RPCError

from worker.settings import connect_temporal
from workflows import search_attributes


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "register-search-attributes",
        help="add the workflows' search attributes to the Temporal namespace (idempotent)",
        description=__doc__,
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        added = asyncio.run(_register())
    except (RuntimeError, RPCError, OSError) as err:
        print(f"llmisvc-router register-search-attributes: {err}", file=sys.stderr)
        return 1
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
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=client.namespace, search_attributes=missing)
        )
    return sorted(missing)


async def _register() -> list[str]:
    return await register_search_attributes(await connect_temporal())
