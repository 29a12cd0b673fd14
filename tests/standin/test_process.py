"""The standalone server (``apiserver`` subcommand) as a process: kubeconfig, signals, control endpoint."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from apiserver_standin import cli
from apiserver_standin.control import ControlClient
from apiserver_standin.testing import running_apiserver_process

from .helpers import GATEWAY, free_port, load_kubeconfig, route


def test_register_adds_the_apiserver_subcommand_with_a_handler():
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["apiserver", "--port", "1234", "--kubeconfig", "k", "--crds", "pool-v1"])
    assert args.handler is cli.run and (args.port, args.host, args.crds) == (1234, "127.0.0.1", "pool-v1")


def test_the_kubeconfig_points_at_the_server_with_a_dummy_token(standalone):
    config = yaml.safe_load(standalone.kubeconfig.read_text())
    context = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c for c in config["clusters"] if c["name"] == context["context"]["cluster"])
    user = next(u for u in config["users"] if u["name"] == context["context"]["user"])
    assert cluster["cluster"]["server"] == standalone.url and user["user"]["token"]


def test_the_official_client_loads_the_kubeconfig(standalone):
    configured = client.Configuration()
    load_kubeconfig(str(standalone.kubeconfig), configured)
    with client.ApiClient(configured) as api:
        version: Any = client.VersionApi(api).get_code()
        assert version.git_version.startswith("v1.")


def test_fault_rules_and_counters_work_across_processes(standalone):
    control = ControlClient(standalone.url)
    control.clear_faults()
    control.reset_requests()
    rule = control.add_fault(verb="create", resource="httproutes", status=500, times=1)
    assert rule["id"] and control.faults()[0]["status"] == 500
    with client.ApiClient(client.Configuration(host=standalone.url)) as api:
        custom = client.CustomObjectsApi(api)
        with pytest.raises(ApiException) as exc:
            custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("x-proc"))
        assert exc.value.status == 500
        custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("x-proc"))
        custom.delete_namespaced_custom_object(*GATEWAY, "default", "httproutes", "x-proc")
    assert control.count(verb="create", resource="httproutes") == 2
    assert control.count(verb="create", resource="httproutes", code=500) == 1
    assert control.faults()[0]["fired"] == 1
    recent = control.requests(recent=10)["recent"]
    assert [r["verb"] for r in recent] == ["create", "create", "delete"]
    control.reset_requests()
    assert control.requests()["total"] == 0
    control.clear_faults()
    assert control.faults() == []


def test_a_request_hung_by_a_remote_rule_completes_when_released(standalone):
    control = ControlClient(standalone.url)
    rule = control.add_fault(verb="list", resource="configmaps", hang=True, times=1)
    done = threading.Event()

    def list_configmaps() -> None:
        with client.ApiClient(client.Configuration(host=standalone.url)) as api:
            client.CoreV1Api(api).list_namespaced_config_map("default")
        done.set()

    worker = threading.Thread(target=list_configmaps)
    worker.start()
    assert not done.wait(0.3)
    control.release(rule["id"])
    assert done.wait(5)
    worker.join()
    control.clear_faults()


def test_crds_can_be_removed_and_installed_through_the_control_endpoint(standalone):
    control = ControlClient(standalone.url)
    assert control.remove_crds("pool-v1alpha2") == ["inferencepools.inference.networking.x-k8s.io"]
    with client.ApiClient(client.Configuration(host=standalone.url)) as api:
        custom = client.CustomObjectsApi(api)
        with pytest.raises(ApiException) as exc:
            custom.list_namespaced_custom_object(
                "inference.networking.x-k8s.io", "v1alpha2", "default", "inferencepools"
            )
        assert exc.value.status == 404
        assert control.install_crds("pool-v1alpha2") == ["inferencepools.inference.networking.x-k8s.io"]
        custom.list_namespaced_custom_object(
            "inference.networking.x-k8s.io", "v1alpha2", "default", "inferencepools"
        )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_server_exits_0_on_sigterm_and_sigint(tmp_path: Path, signum: int) -> None:
    port = free_port()
    kubeconfig = tmp_path / "kc"
    command = [
        sys.executable,
        "-m",
        "apiserver_standin",
        "apiserver",
        "--port",
        str(port),
        "--kubeconfig",
        str(kubeconfig),
        "--crds",
        "none",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        while not kubeconfig.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kubeconfig.exists()
        process.send_signal(signum)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "Traceback" not in err and "stopped" in out


def test_an_unknown_crd_selection_is_a_usage_error(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "apiserver_standin",
        "apiserver",
        "--kubeconfig",
        str(tmp_path / "k"),
        "--crds",
        "bogus",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 2 and "unknown CRD" in result.stderr


def test_the_workload_controller_flag_reports_workloads_ready(tmp_path: Path) -> None:
    service = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": "m", "namespace": "default"},
        "spec": {"model": {"uri": "hf://org/m"}},
    }
    with (
        running_apiserver_process(
            tmp_path / "kubeconfig", free_port(), extra_args=["--workload-controller"]
        ) as p,
        client.ApiClient(client.Configuration(host=p.url)) as api,
    ):
        custom = client.CustomObjectsApi(api)
        custom.create_namespaced_custom_object(
            "serving.kserve.io", "v1alpha2", "default", "llminferenceservices", service
        )
        deadline = time.monotonic() + 10
        conditions: list[Any] = []
        while time.monotonic() < deadline and not conditions:
            stored: Any = custom.get_namespaced_custom_object(
                "serving.kserve.io", "v1alpha2", "default", "llminferenceservices", "m"
            )
            conditions = [
                c for c in (stored.get("status") or {}).get("conditions") or [] if c["status"] == "True"
            ]
            time.sleep(0.1)
        assert [c["type"] for c in conditions] == ["WorkloadsReady"]
