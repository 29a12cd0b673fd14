"""``llmisvc-router uninstall``: end the router's workflows in the Temporal namespace, of one cluster or of
all (its ``--help`` is :data:`llmisvc_router.help_texts.UNINSTALL`). Temporal only: no Kubernetes client
is made."""

from __future__ import annotations

import argparse
import asyncio

from temporalio.client import Client
from temporalio.service import RPCError

from llmisvc_router import help_texts, options
from llmisvc_router.errors import CommandError
from llmisvc_runtime import exit_codes, temporal
from llmisvc_runtime.errors import first_line
from workflows import ending

REASON = "llmisvc-router uninstall"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = help_texts.add_command(commands, "uninstall", help_texts.UNINSTALL_HELP, help_texts.UNINSTALL)
    scope = parser.add_mutually_exclusive_group()
    options.cluster(
        scope,
        "end the workflows of this cluster (default: $LLMISVC_ROUTER_CLUSTER, else those of an install "
        "without a cluster name)",
    )
    scope.add_argument("--all-clusters", action="store_true", help="end the workflows of every cluster")
    parser.add_argument("--yes", action="store_true", help="end them (without it nothing is ended)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be ended, end nothing")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = options.settings(args)
    cluster = None if args.all_clusters else settings.cluster
    try:
        return asyncio.run(_uninstall(cluster, confirmed=args.yes, dry_run=args.dry_run))
    except RPCError as err:
        raise CommandError(f"Temporal: {first_line(err)}", exit_codes.UNAVAILABLE) from err


def describe_scope(cluster: str | None) -> str:
    if cluster is None:
        return "of every cluster"
    return f"of cluster {cluster}" if cluster else "of the install without a cluster name"


async def _uninstall(cluster: str | None, *, confirmed: bool, dry_run: bool) -> int:
    client = await temporal.connect()
    scope = describe_scope(cluster)
    running = await ending.running_workflows(client)
    ids = [w.id for w in running if cluster is None or w.service.cluster == cluster]
    if not ids:
        print(f"no running workflows {scope}; nothing to end")
        return exit_codes.OK
    if dry_run or not confirmed:
        for wid in ids:
            print(f"would end {wid}")
        if dry_run:
            print(f"would end {len(ids)} workflows {scope} (dry run: nothing was ended)")
            return exit_codes.OK
        raise CommandError(
            f"nothing was ended: add --yes to end these {len(ids)} workflows", exit_codes.USAGE
        )
    return await _end(client, ids, scope)


async def _end(client: Client, ids: list[str], scope: str) -> int:
    ended = 0
    for wid in ids:
        if await ending.end_workflow(client, wid, REASON):
            print(f"ended {wid}")
            ended += 1
        else:
            print(f"already ended {wid}")
    late = f"; {len(ids) - ended} had ended already" if ended < len(ids) else ""
    print(f"ended {ended} workflows {scope}{late}")
    return exit_codes.OK
