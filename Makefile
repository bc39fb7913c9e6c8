# The two commands: `make run` (bring the platform up) and `make test` (check the layers, then run
# the whole suite). `make lint` checks the import-linter contracts (.importlinter) alone.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test lint

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python requirements.txt requirements-dev.txt dynabench_client/pyproject.toml
	$(BIN)/pip install -q -r requirements-dev.txt
	$(BIN)/pip install -q -e ./dynabench_client
	touch $@

install: $(VENV)/.installed

run: install
	./scripts/run.sh

lint: install
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest -q
