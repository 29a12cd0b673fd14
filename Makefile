# The two commands a newcomer needs (see README): `make run` and `make test`.
# Both set up the machine first (scripts/bootstrap): virtualenv, locked packages, Temporal binaries.
.PHONY: run plan test check chaos bootstrap lock

VENV := .venv/bin
EXAMPLE ?= examples/minimal-presets.yaml

bootstrap:
	@scripts/bootstrap

## run: the whole stack locally (Temporal dev server + UI, the real Kubernetes control plane, worker, watcher)
run: bootstrap
	$(VENV)/llmisvc-router dev

## plan: one reconcile pass of a shipped example, offline (no cluster, no Temporal)
plan: bootstrap
	$(VENV)/llmisvc-router plan -f $(EXAMPLE)

## test: the whole test suite (installs Debian's chromium for the Temporal UI test if it is missing)
test: bootstrap
	@scripts/ensure-chromium
	$(VENV)/pytest -q

## chaos: faults, crashes and hostile input against the real processes (50 services; ~15 min); prints a
## summary table, writes test-artifacts/chaos-report.json; exit 1 when a target is missed
chaos: bootstrap
	nice -n 10 $(VENV)/python -m benchmarks.chaos.run --scale full --json test-artifacts/chaos-report.json

## check: lint, types and the import contracts (the pure core does no I/O; packages and core in layers)
check: bootstrap
	$(VENV)/ruff check .
	$(VENV)/ruff format --check .
	$(VENV)/mypy .
	$(VENV)/lint-imports

lock:
	.tools/bin/uv lock
