"""The chaos suite at reduced scale (10 services; two workers and two watchers shared by the scenarios, on
the test session's control plane, behind a fault proxy of the suite's own): every scenario of
``make chaos`` runs against the real processes and its targets are asserted. The JSON report of the run
is written to ``test-artifacts/chaos-reduced.json``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.chaos.context import REDUCED, Context
from benchmarks.chaos.report import Result, write_json
from benchmarks.chaos.run import run_one
from tests.cluster import Plane

# Each scenario runs whole stacks for tens of seconds, up to a minute with its fixture on a loaded machine:
# too close to the suite's 120 s default (pyproject.toml) for a slower one.
pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
RESULTS: list[Result] = []


@pytest.fixture(scope="module")
def chaos(tmp_path_factory: pytest.TempPathFactory, plane: Plane) -> Iterator[Context]:
    # The session's control plane: the scenarios restart its parts and edit the router's ClusterRole,
    # and leave it as they found it.
    ctx = Context(tmp_path_factory.mktemp("chaos"), REDUCED, share=True, plane=plane.control)
    try:
        yield ctx
    finally:
        ctx.close()
        write_json(ROOT / "test-artifacts" / "chaos-reduced.json", REDUCED.name, RESULTS)


def meets_its_targets(ctx: Context, scenario: str) -> None:
    result = run_one(ctx, scenario)
    RESULTS.append(result)
    if result.error:  # the harness broke, not the target: never an expected failure
        pytest.fail(f"{scenario}: {result.error}")
    assert result.passed, f"{scenario}: " + "; ".join(result.failures())


def test_with_10_percent_of_requests_failing_services_converge_within_twice_the_fault_free_time(chaos):
    meets_its_targets(chaos, "api_faults_10")


def test_with_30_percent_of_requests_failing_nine_in_ten_services_converge_inside_the_window(chaos):
    meets_its_targets(chaos, "api_faults_30")


def test_cut_watches_and_compactions_lose_and_double_nothing(chaos):
    meets_its_targets(chaos, "watch_cuts")


def test_watches_resumed_after_a_compaction_get_410_gone_and_relist_every_change_they_missed(chaos):
    meets_its_targets(chaos, "watch_gone")


def test_removed_and_reinstalled_crds_are_reported_then_recovered_from(chaos):
    meets_its_targets(chaos, "crd_removal")


def test_after_a_kube_apiserver_sigkill_and_restart_everything_converges_within_15_s(chaos):
    meets_its_targets(chaos, "apiserver_sigkill")


def test_after_an_etcd_sigkill_and_restart_everything_converges_within_15_s(chaos):
    meets_its_targets(chaos, "etcd_sigkill")


def test_forbidden_writes_are_reported_in_the_status_and_recovered_from_once_rbac_is_restored(chaos):
    meets_its_targets(chaos, "rbac_revoked")


def test_after_worker_sigkills_during_passes_everything_converges_within_15_s(chaos):
    meets_its_targets(chaos, "worker_sigkill")


def test_after_a_temporal_server_restart_everything_converges_within_15_s(chaos):
    meets_its_targets(chaos, "temporal_restart")


def test_one_of_two_workers_and_one_of_two_watchers_killed_costs_no_convergence(chaos):
    meets_its_targets(chaos, "one_of_two_killed")


def test_a_users_route_with_the_managed_name_is_never_written(chaos):
    meets_its_targets(chaos, "foreign_route")


def test_a_retried_delete_never_removes_the_route_that_replaced_ours(chaos):
    meets_its_targets(chaos, "replaced_route")


def test_a_retried_create_never_writes_for_a_service_that_was_replaced(chaos):
    meets_its_targets(chaos, "recreated_service")


def test_junk_signal_update_and_query_payloads_never_fail_a_workflow_task(chaos):
    meets_its_targets(chaos, "fuzzed_signals")


def test_no_planted_secret_reaches_a_workflow_history_and_no_event_is_large(chaos):
    meets_its_targets(chaos, "history_secrets")


def test_malformed_services_do_not_slow_a_good_services_route_repair_past_2_s(chaos):
    meets_its_targets(chaos, "malformed_services")
