"""The Temporal Web UI shows what a service's workflow publishes: a person finds the workflow by its
search attributes and reads the static summary and the Markdown current details.

A dev server with the UI and the four search attributes registered, the production worker
(``build_worker`` with the real activities as the worker's ServiceAccount, on the test's namespaces of the
real control plane: one service with the presets, its ingress Gateway programmed, no route accepted) and a
start through ``WorkflowStarter``, as the watcher does it; then headless Chromium (Debian's ``chromium``,
driven by Playwright) goes through the pages. Screenshots of the list and of the workflow page are saved
under ``test-artifacts/``. A machine without Chromium fails this test: CI installs it.
"""

from __future__ import annotations

import asyncio
import socket
import urllib.parse
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest_asyncio
from playwright.async_api import Page, async_playwright, expect
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.router_activities import RouterActivities
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core.models.kube import LLMISVC
from llmisvc_kube.client import CLIENT_RETRIES, KubeClusterApi
from llmisvc_runtime.settings import WorkerSizing
from llmisvc_watcher.runner import stop_cache
from tests.cluster import Cluster
from tests.integration import world
from tests.integration.harness import (
    TEST_AGENT,
    WORKER_AGENT,
    gateway_programmed_on,
    running_gateway_controller,
    seed,
    until,
)
from tests.tools import TEMPORAL
from worker.factory import DATA_CONVERTER, build_worker
from workflows import search_attributes
from workflows.models import ReconcileSignal, workflow_id
from workflows.starting import WorkflowStarter

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TASK_QUEUE = "temporal-ui-test"
UI_WAIT_MS = 20_000  # the SPA fetches from the server after each navigation
VISIBLE_WAIT = 20.0  # seconds for the first pass to reach the list queries (visibility is eventual)
NAME = "opt"


def service_url(namespace: str) -> str:
    """What the first pass writes: the programmed ingress Gateway's address and the service's path."""
    return f"http://{world.GATEWAY_ADDRESS}/{namespace}/{NAME}"


def query(namespace: str) -> str:
    """The query a person would type: this service's workflow, found by the search attributes it keeps."""
    return " AND ".join(
        f'{key.name} = "{value}"'
        for key, value in (
            (search_attributes.NAMESPACE, namespace),
            (search_attributes.NAME, NAME),
            (search_attributes.OUTCOME, "reconciled"),
        )
    )


#: The saved view of docs/operations.md: every service's workflow, with these columns.
SERVICES_QUERY = 'WorkflowType = "LLMInferenceServiceWorkflow"'
_SHOWN = (search_attributes.NAMESPACE, search_attributes.NAME)
COLUMNS = [key.name for key in (*_SHOWN, search_attributes.ROUTER_READY, search_attributes.OUTCOME)]
HIDDEN_COLUMNS = ["Run ID", "Type", "End"]
VIEW_NAME = "LLMInferenceServices"


@dataclass(frozen=True)
class UiServer:
    client: Client
    url: str  # of the Web UI


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def ui_server() -> AsyncIterator[UiServer]:
    port = _free_port()
    env = await WorkflowEnvironment.start_local(
        data_converter=DATA_CONVERTER,
        dev_server_existing_path=TEMPORAL,
        ui=True,
        ui_port=port,
        search_attributes=list(search_attributes.ALL),
        dev_server_extra_args=["--ui-disable-news-fetch"],
    )
    try:
        yield UiServer(env.client, f"http://127.0.0.1:{port}")
    finally:
        await env.shutdown()


async def seed_service(cluster: Cluster) -> None:
    """The service and its ingress Gateway, programmed by the simulated controller, which then stops: the
    route the first pass creates is accepted by nobody (RouterReady False, the URL known)."""
    with cluster.api_client(TEST_AGENT) as api:
        kube = KubeClusterApi(api)
        await asyncio.to_thread(seed, cluster, kube)
        with running_gateway_controller(cluster):
            await until(lambda: gateway_programmed_on(kube, cluster), "the ingress Gateway to be programmed")
        await asyncio.to_thread(kube.create, LLMISVC, world.service(NAME, cluster.namespace))


async def test_a_services_workflow_is_found_by_search_attribute_and_shows_summary_and_details(
    ui_server: UiServer, cluster: Cluster
) -> None:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: apt-get install -y chromium (Debian's package)"
    client, namespace = ui_server.client, cluster.namespace
    await seed_service(cluster)
    worker_client = cluster.api_client(WORKER_AGENT, role="worker", retries=CLIENT_RETRIES)
    cache = start_worker_cache(worker_client, [namespace], cluster.env)
    with worker_client, ThreadPoolExecutor(max_workers=4) as executor:
        activities = RouterActivities(KubeClusterApi(worker_client), cache, cluster.env)
        try:
            async with build_worker(
                client, TASK_QUEUE, activities, executor, WorkerSizing(activity_threads=4)
            ):
                starter = await WorkflowStarter.create(client, TASK_QUEUE, resync_seconds=600)
                assert starter.with_search_attributes, "the dev server should have the search attributes"
                await starter.signal_with_start(
                    namespace, NAME, "reconcile", [ReconcileSignal(reason="Temporal UI test")]
                )
                await _until_listed(client, query(namespace))
                await _browse(ui_server.url, namespace)
        finally:
            await stop_cache(cache)


async def _browse(ui_url: str, namespace: str) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1600, "height": 900})
            try:
                await _list_services_with_their_columns(page, ui_url, namespace)
                await _find_in_list(page, ui_url, namespace)
                await _read_user_metadata(page, namespace)
                await _read_timer_summary(page)
            except AssertionError:
                await _screenshot(page, "temporal-ui-failure.png")  # what the page showed instead
                raise
        finally:
            await browser.close()


async def _list_services_with_their_columns(page: Page, ui_url: str, namespace: str) -> None:
    """The saved-view recipe of docs/operations.md: the services' workflows with the four search
    attributes as columns, saved as a view."""
    query = urllib.parse.quote(SERVICES_QUERY, safe="")
    await page.goto(f"{ui_url}/namespaces/default/workflows?query={query}")
    await page.get_by_test_id("workflows-summary-table-configuration-button").click(timeout=UI_WAIT_MS)
    for column in COLUMNS:
        await page.get_by_test_id(f"orderable-list-item-{column}-add-button").click()
    for column in HIDDEN_COLUMNS:
        await page.get_by_test_id(f"orderable-list-item-{column}-remove-button").click()
    await page.get_by_test_id("drawer-close-button").click()
    header = page.locator("thead th")
    await expect(header.filter(has_text=COLUMNS[-1])).to_have_count(1, timeout=UI_WAIT_MS)
    names = [text.strip() for text in await header.all_inner_texts()]
    assert [n for n in names if n in COLUMNS] == COLUMNS, names
    assert not set(HIDDEN_COLUMNS) & set(names), names
    row = page.locator("tbody tr", has=page.get_by_role("link", name=workflow_id(namespace, NAME)))
    cells = row.locator("td")
    texts = [text.strip() for text in await cells.all_inner_texts()]
    for value in (namespace, NAME, "False", "reconciled"):
        assert value in texts, f"{value!r} not in the row {texts}"
    await page.get_by_test_id("create-view-button").click()
    await page.get_by_test_id("workflow-save-view-modal-input").fill(VIEW_NAME)
    await page.get_by_test_id("workflow-save-view-modal-input").press("Enter")
    await expect(page.get_by_test_id("saved-views-button")).to_contain_text(VIEW_NAME, timeout=UI_WAIT_MS)
    await _screenshot(page, "temporal-ui-services.png")


async def _read_timer_summary(page: Page) -> None:
    """The timer between passes says what it waits for, in the workflow's event history."""
    await page.get_by_role("tab", name="History").click()
    await expect(page.get_by_text("resync in 10m").first).to_be_visible(timeout=UI_WAIT_MS)
    await _screenshot(page, "temporal-ui-timer.png")


async def _find_in_list(page: Page, ui_url: str, namespace: str) -> None:
    """The workflow list filtered by the search attributes shows the service's workflow."""
    quoted = urllib.parse.quote(query(namespace), safe="")
    await page.goto(f"{ui_url}/namespaces/default/workflows?query={quoted}")
    link = page.get_by_role("link", name=workflow_id(namespace, NAME), exact=True)
    await expect(link).to_be_visible(timeout=UI_WAIT_MS)
    await expect(link).to_have_count(1)  # one workflow per service (the Type column is hidden by the view)
    await _screenshot(page, "temporal-ui-list.png")
    await link.click()
    await page.wait_for_url("**/timeline", timeout=UI_WAIT_MS)


async def _read_user_metadata(page: Page, namespace: str) -> None:
    """The static summary and the current details render; the details as Markdown (a table, a link)."""
    await page.get_by_role("tab", name="User Metadata").click()
    summary = page.frame_locator("#user-metadata-summary")
    await expect(summary.get_by_text(f"LLMInferenceService {namespace}/{NAME}")).to_be_visible(
        timeout=UI_WAIT_MS
    )
    fixed = await page.content()
    assert "Reconciles the router of the LLMInferenceService" in fixed or await _static_details_shown(page)
    details = page.frame_locator("#user-metadata-current-details")
    await expect(details.locator("h3")).to_have_text(
        f"LLMInferenceService {namespace}/{NAME}", timeout=UI_WAIT_MS
    )
    await expect(details.locator("strong").first).to_have_text("Last pass:")
    await expect(details.get_by_text("reconciled at")).to_be_visible()
    await expect(details.get_by_role("link", name=service_url(namespace))).to_have_attribute(
        "href", service_url(namespace)
    )
    table = details.locator("table")
    await expect(table.locator("th")).to_have_text(["condition", "status"])
    router_ready = table.locator("tr", has=page.locator("td", has_text="RouterReady"))
    await expect(router_ready.locator("td")).to_have_text(["RouterReady", "False(HTTPRoutesNotReady)"])
    await _screenshot(page, "temporal-ui-workflow.png")


async def _static_details_shown(page: Page) -> bool:
    """The static details (what the workflow is, how to drive it) render in their own frame."""
    frame = page.frame_locator("#user-metadata-details")
    await expect(frame.get_by_text("Reconciles the router of the LLMInferenceService")).to_be_visible(
        timeout=UI_WAIT_MS
    )
    return True


async def _until_listed(client: Client, query: str) -> None:
    """The UI lists what the visibility store has; wait for the first pass's search attributes there."""
    deadline = asyncio.get_running_loop().time() + VISIBLE_WAIT
    while not [execution async for execution in client.list_workflows(query)]:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no workflow matched {query!r} within {VISIBLE_WAIT:.0f}s")
        await asyncio.sleep(0.2)


async def _screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
