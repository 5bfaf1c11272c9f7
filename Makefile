# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DAGSTER_HOME := $(CURDIR)/.dagster

LOCK := requirements.lock

.PHONY: demo test ui lint venv lock

venv: $(STAMP)

# Install exactly what the lock pins (pip and setuptools included), each file checked against its
# hash, then the project itself, built by the locked setuptools and pulling nothing the lock does not name.
# The locked pip goes in first, alone: the pip that `venv` bundles mishandles extras (gql[requests])
# in hash mode.
# Reinstall whenever pyproject.toml or the lock changes. torch 2.13.0+cpu comes from local disk here.
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r <(sed -n '/^pip==/,/# via/p' $(LOCK))
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Regenerate the lock from pyproject.toml (with the dev extra), keeping every pin that still fits.
# `make lock PIP_COMPILE_ARGS=--upgrade` (or `--upgrade-package NAME`) moves pins on purpose.
# Index and find-links locations come from this machine's pip config, so they stay out of the lock.
# The new lock replaces the old one only if it resolved and holds no CUDA package: pip finds only
# the CUDA build of torch (nvidia-*, triton) when it is not pointed at the CPU wheel.
lock: $(STAMP)
	cp $(LOCK) $(LOCK).new
	CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --quiet --extra dev --allow-unsafe --strip-extras \
		--generate-hashes --no-emit-index-url --no-emit-find-links $(PIP_COMPILE_ARGS) \
		--output-file $(LOCK).new pyproject.toml || { rm -f $(LOCK).new; exit 1; }
	if grep -qiE '^(nvidia|triton)' $(LOCK).new; then rm $(LOCK).new; \
		echo "make lock: torch resolved to its CUDA build; point pip at torch's CPU wheel (find-links)" >&2; exit 1; fi
	mv $(LOCK).new $(LOCK)

# Build the embedded sample archive if data/raw holds no scan, register its tranches as partitions
# (assets/partitions.py), materialise every asset for each tranche, summarise.
# The instance settings (run queue limit) of `make demo` and `make ui`: deploy/dagster.yaml.
$(DAGSTER_HOME)/dagster.yaml: deploy/dagster.yaml
	mkdir -p $(DAGSTER_HOME)
	cp deploy/dagster.yaml $@

demo: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/veernet --profile demo sample
	for tranche in $$(DAGSTER_HOME=$(DAGSTER_HOME) VEERNET_PROFILE=demo $(BIN)/python -m assets.partitions); do \
		PATH=$(CURDIR)/$(BIN):$$PATH DAGSTER_HOME=$(DAGSTER_HOME) VEERNET_PROFILE=demo \
		$(BIN)/dagster asset materialize -m assets.definitions --select '*' --partition "$$tranche" || exit 1; done
	$(BIN)/veernet --profile demo summary

# Test files spread over up to 4 workers (pytest-xdist; `auto` is one per core), one file per worker at a
# time, so a file's module fixtures are built once. Files go out in collection order, where tests/conftest.py
# puts the slowest first (xdist's default would send the files with the most tests first, and so the
# slowest, which hold one or two tests each, last). `make test TEST_WORKERS=0` runs everything in one process.
TEST_WORKERS ?= auto

test: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile \
		--no-loadscope-reorder

# The Dagster UI on http://127.0.0.1:3000 with the asset graph and its checks.
ui: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	PATH=$(CURDIR)/$(BIN):$$PATH DAGSTER_HOME=$(DAGSTER_HOME) $(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

lint: $(STAMP)
	$(BIN)/ruff check veernet_pipeline assets tests benchmarks
