"""What every command tells a person before it talks to Temporal: its ``--help`` (a description, examples,
the exit statuses, no reST markup), and one-line errors with one exit status per class of error:
2 for bad settings or a kubeconfig that cannot be used, 4 for an API server or port that is unavailable."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from llmisvc_devstack.controlplane import pki, write_kubeconfig
from llmisvc_router.cli import main

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = [
    "plan", "worker", "run", "reconcile", "stop", "resume", "status", "watch",
    "register-search-attributes", "uninstall", "dev", "codec-server",
]  # fmt: skip
NOW = "2026-01-01T00:00:00Z"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "LLMISVC_ROUTER_", "OTEL_"))}
    env.pop("KUBECONFIG", None)
    env["HOME"] = "/nonexistent"  # no ~/.kube/config and no Temporal profile from the machine
    env["LLMISVC_ROUTER_PROBE_PORT"] = "0"  # 8081 may be another process's on this machine
    return {**env, **extra}


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmisvc_router", *args],
        env=env if env is not None else environment(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


def kubeconfig_for(path: Path, url: str) -> Path:
    """A kubeconfig as the control plane writes one (a CA of its own, a bearer token) for ``url``, where
    nothing listens."""
    authority = pki.create(path.parent / "pki")
    return write_kubeconfig(path, url, authority.ca_cert, "token-of-nobody")


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_a_description_examples_and_the_exit_statuses_in_its_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:  # in-process: argparse prints the help and exits 0
        main([command, "--help"])
    assert exited.value.code == 0
    result = capsys.readouterr()
    _, _, rest = result.out.partition("\n\n")
    description = rest.split("\n\n")[0]
    assert len(description.split()) >= 8, f"{command}: no description in --help:\n{result.out}"
    assert "examples:\n" in result.out and f"llmisvc-router {command}" in result.out.split("examples:")[1]
    assert "``" not in result.out
    assert "exit status:" in result.out
    assert "3    no such LLMInferenceService" in result.out
    assert "4    the Kubernetes API or Temporal" in result.out
    if "--task-queue" in result.out:
        flat = " ".join(result.out.split())
        assert "(default: settings)" not in flat
        assert "$LLMISVC_ROUTER_TASK_QUEUE, else llmisvc-router" in flat


@pytest.mark.parametrize("command", ["worker", "run", "watch"])
def test_a_bad_setting_exits_2_from_every_long_running_command(command: str, tmp_path: Path) -> None:
    kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", "https://127.0.0.1:1")
    env = environment(LLMISVC_ROUTER_RESYNC_SECONDS="soon", KUBECONFIG=str(kubeconfig))
    result = cli(command, env=env)
    assert result.returncode == 2
    assert one_line(result.stderr).startswith(f"llmisvc-router {command}: LLMISVC_ROUTER_RESYNC_SECONDS:")


@pytest.mark.parametrize("command", ["worker", "watch", "status"])
def test_a_missing_kubeconfig_exits_2_naming_the_file(command: str) -> None:
    args = [command, *(["llm/opt"] if command in ("status", "stop") else [])]
    result = cli(*args, env=environment(KUBECONFIG="/missing"))
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        f"llmisvc-router {command}: kubeconfig /missing: no such file "
        "(set KUBECONFIG or --kubeconfig to an existing kubeconfig)"
    )


def test_no_kubeconfig_at_all_outside_a_pod_says_what_to_set() -> None:
    result = cli("worker")
    assert result.returncode == 2
    assert "set KUBECONFIG or pass --kubeconfig FILE" in one_line(result.stderr)


@pytest.mark.parametrize("command", ["worker", "run", "reconcile"])
def test_an_unreachable_api_server_is_refused_at_start_with_4(command: str, tmp_path: Path) -> None:
    url = f"https://127.0.0.1:{free_port()}"
    kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", url)
    args = [command, *(["llm/opt"] if command == "reconcile" else [])]
    result = cli(*args, env=environment(KUBECONFIG=str(kubeconfig), TEMPORAL_ADDRESS="127.0.0.1:1"))
    assert result.returncode == 4
    assert one_line(result.stderr).startswith(
        f"llmisvc-router {command}: cannot reach the Kubernetes API at {url}"
    )


def test_dev_with_a_busy_metrics_port_names_the_flag_and_exits_4() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = cli("dev", "--metrics-port", str(port), "--temporal-port", str(free_port()),
                     "--ui-port", str(free_port()), "--kubeconfig", "/dev/null/never")  # fmt: skip
    assert result.returncode == 4
    line = one_line(result.stderr)
    assert line.startswith(f"llmisvc-router dev: cannot serve metrics on 127.0.0.1:{port}")
    assert "--metrics-port" in line and "LLMISVC_ROUTER_METRICS_PORT" not in line


def test_version_prints_the_installed_packages_version() -> None:
    result = cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"llmisvc-router {metadata.version('llmisvc-router')}\n"


def test_plan_reads_several_files_as_one_state(tmp_path: Path) -> None:
    documents = list(yaml.safe_load_all((ROOT / "examples/minimal-presets.yaml").read_text()))
    services = [d for d in documents if d and d["kind"] == "LLMInferenceService"]
    others = [d for d in documents if d and d["kind"] != "LLMInferenceService"]
    (tmp_path / "services.yaml").write_text(yaml.safe_dump_all(services))
    (tmp_path / "cluster.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": others})
    )
    whole = cli("plan", "--now", NOW, "-f", "examples/minimal-presets.yaml")
    split = cli(
        "plan", "--now", NOW, "-f", str(tmp_path / "cluster.yaml"), "-f", str(tmp_path / "services.yaml")
    )
    assert whole.returncode == split.returncode == 0, split.stderr
    assert yaml.safe_load(split.stdout) == yaml.safe_load(whole.stdout)


def test_plan_refuses_an_object_found_in_two_files(tmp_path: Path) -> None:
    example = ROOT / "examples/minimal-presets.yaml"
    copy = tmp_path / "copy.yaml"
    copy.write_text(example.read_text())
    result = cli("plan", "--now", NOW, "-f", str(example), "-f", str(copy))
    assert result.returncode == 2
    assert one_line(result.stderr).startswith(f"llmisvc-router plan: {example} and {copy} both hold ")


def test_each_product_command_is_registered_by_the_module_the_cli_table_names() -> None:
    """``MODULE_OF_COMMAND`` lets a command line build the parser of its own command alone; a command it
    missed, or named with the wrong module, would be an 'invalid choice'."""
    import argparse

    from llmisvc_router.cli import ALL_MODULES, MODULE_OF_COMMAND, build_parser

    def registered(*modules: str) -> set[str]:
        parser = argparse.ArgumentParser()
        commands = parser.add_subparsers()
        for module in modules:
            __import__(f"llmisvc_router.{module}", fromlist=["register"]).register(commands)
        return set(commands.choices)

    for module in ALL_MODULES:
        assert registered(module) == {c for c, m in MODULE_OF_COMMAND.items() if m == module}, module
    (full,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(full.choices) == set(MODULE_OF_COMMAND) | {"dev"}  # dev: the dev stack's entry point


def test_plan_starts_without_importing_temporal_or_the_kubernetes_client() -> None:
    """The offline command imports neither (3.5 s of its start-up when it did)."""
    probe = (
        "import sys; from llmisvc_router.cli import build_parser; build_parser(['plan', '-f', 'x']);"
        "print(sorted(m for m in ('temporalio', 'kubernetes', 'opentelemetry.sdk') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"
