# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DAGSTER_HOME := $(CURDIR)/.dagster

.PHONY: demo test ui lint venv

venv: $(STAMP)

# Reinstall whenever pyproject.toml changes; torch==2.13.0 resolves from local disk here.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Build the embedded sample archive if data/raw holds no scan, materialise every asset, summarise.
demo: $(STAMP)
	$(BIN)/veernet --profile demo sample
	mkdir -p $(DAGSTER_HOME)
	PATH=$(CURDIR)/$(BIN):$$PATH DAGSTER_HOME=$(DAGSTER_HOME) VEERNET_PROFILE=demo \
		$(BIN)/dagster asset materialize -m assets.definitions --select '*'
	$(BIN)/veernet --profile demo summary

test: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python -m pytest -q

# The Dagster UI on http://127.0.0.1:3000 with the asset graph and its checks.
ui: $(STAMP)
	mkdir -p $(DAGSTER_HOME)
	PATH=$(CURDIR)/$(BIN):$$PATH DAGSTER_HOME=$(DAGSTER_HOME) $(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

lint: $(STAMP)
	$(BIN)/ruff check veernet_pipeline assets tests benchmarks
