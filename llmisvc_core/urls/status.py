"""The routing part of the service's status (spec 3.7.1): ``url``, ``addresses`` and ``router.gateways``."""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.errors import StepFailedError
from llmisvc_core.models.gateway_api import HTTPRoute
from llmisvc_core.models.llmisvc import LLMInferenceService, RouterStatus, SourcedAddress
from llmisvc_core.urls import addressing
from llmisvc_core.urls.discovery import (
    DiscoveredURL,
    DiscoveryError,
    NoURLsDiscoveredError,
    ResolvedGateway,
    dedupe_resolved,
    discover_urls,
)
from llmisvc_core.urls.gateway_lookup import backing_services, discover_gateways
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.config import Environment, RouterConfig
from llmisvc_core.world.snapshot import PassWorld


class RoutingError(StepFailedError):
    """Discovery failed for a route; the pass fails with this text (exit X12)."""


def update_routing_status(
    conds: Conditions,
    world: PassWorld,
    svc: LLMInferenceService,
    config: RouterConfig,
    env: Environment,
    routes: list[HTTPRoute],
) -> list[ResolvedGateway]:
    """R-ST-1..10: write the routing status; return the de-duplicated resolved gateways. A stopped
    service and one without a route lose ``status.router``; otherwise it is updated in place."""
    status = svc.status
    if svc.is_stopped():
        status.router = status.address = status.addresses = status.url = None  # P4 clears the URL too
        conditions.mark_stopped(conds, conditions.HTTPROUTES_READY)
        return []
    if svc.spec.router is None or svc.spec.router.route is None:
        status.router = status.url = None  # P4
        status.addresses = [SourcedAddress(url=workload_url(svc, config, env))]
        return []
    discovered, resolved = _discover_all(world, config, env, routes)
    if routes:
        # KServe #5798: updated in place, only the gateways; the scheduler and the group are the
        # other steps' to set and to clear, so a step that stops early leaves its part as it was.
        if status.router is None:
            status.router = RouterStatus()
        status.router.gateways = addressing.build_observed_gateways(routes) or None
    discovered.sort(key=lambda d: d.url)
    status.url = _status_url(svc, config, env, discovered)
    status.addresses = [addressing.sourced_address(d, svc, env.cluster_domain) for d in discovered] or None
    return dedupe_resolved(resolved)


def workload_url(svc: LLMInferenceService, config: RouterConfig, env: Environment) -> str:
    """R-ST-2: the workload Service's in-cluster URL, no path, no trailing slash."""
    scheme = "https" if config.enable_tls else "http"
    service = naming.workload_service_name(svc.name)
    return f"{scheme}://{service}.{svc.namespace}.svc.{env.cluster_domain}"


def _discover_all(
    world: PassWorld, config: RouterConfig, env: Environment, routes: list[HTTPRoute]
) -> tuple[list[DiscoveredURL], list[ResolvedGateway]]:
    discovered: list[DiscoveredURL] = []
    all_resolved: list[ResolvedGateway] = []
    for route in routes:
        where = f"{route.namespace}/{route.name}"
        try:
            resolved = discover_gateways(world, route)
        except DiscoveryError as err:
            raise RoutingError(f"failed to discover gateways for route {where}: {err}") from err
        all_resolved += resolved
        try:
            discovered += discover_urls(resolved, route, backing_services(world, resolved), config, env)
        except NoURLsDiscoveredError:
            pass  # R-ST-4: a route whose gateways expose nothing yet contributes no URL
        except DiscoveryError as err:
            raise RoutingError(f"failed to discover URL for route {where}: {err}") from err
    return discovered, all_resolved


def _status_url(
    svc: LLMInferenceService, config: RouterConfig, env: Environment, discovered: list[DiscoveredURL]
) -> str | None:
    """R-ST-8: prefer external URLs (no scheme preference), else internal ones with the configured scheme."""
    external = addressing.external_urls(discovered, env.cluster_domain)
    if external:
        return addressing.prefer_path_based_url(external, svc.namespace, svc.name, "")
    if discovered:
        return addressing.prefer_path_based_url(discovered, svc.namespace, svc.name, config.url_scheme)
    return None
