# The two commands: `make run` (bring the platform up) and `make test` (check the layers, then run
# the whole suite, browser tests included, in parallel). `make lint` checks the import-linter
# contracts (.importlinter) and that no test asserts on elapsed time (scripts/check_test_clocks.py).
#
# TEST_WORKERS: pytest-xdist workers; `auto` is one per CPU core (psutil's count: 2 on the 2-core
# machines this project runs on, where the suite is CPU-bound, so more workers only share the same
# two cores), at most 4 (each worker holds torch and its own processes in memory, and takes a
# Redis database of its own: base + worker number stays within Redis's 16). `make test
# TEST_WORKERS=0` runs serially. PYTEST_ARGS are appended (e.g. PYTEST_ARGS="-x -k leaderboard").
# --maxschedchunk 1: tests are handed out one at a time, so the slow ones (run first, see
# conftest.py) spread over the workers.
# install: --no-compile, because pip compiles every module of every package to bytecode, one file
# after another (22,000 files, about 45 s of a 75 s install, torch most of them), and the platform and
# its tests import about 3,500 of them: Python compiles those the first time they are imported
# (about 9 CPU-s, once) and caches them, as make lets it (below).
# PYTHONDONTWRITEBYTECODE is emptied: Python caches the project's compiled modules in __pycache__/
# (ignored by git) even where the environment asks it not to. Otherwise every process the suite or
# `make run` starts (workers, servers, manage.py commands: well over a hundred in `make test`)
# compiles the project's modules again, about 0.3 s each, and each pytest worker rewrites and
# compiles every test module again, about 5 s.
export PYTHONDONTWRITEBYTECODE :=
PY ?= python3
TEST_WORKERS ?= auto
PYTEST_ARGS ?=
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test lint

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python requirements.txt requirements-dev.txt dynabench_client/pyproject.toml
	$(BIN)/pip install -q --no-compile -r requirements-dev.txt
	$(BIN)/pip install -q --no-compile -e ./dynabench_client
	touch $@

install: $(VENV)/.installed

run: install
	./scripts/run.sh

lint: install
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_test_clocks.py

test: lint
	$(BIN)/pytest -q -n $(TEST_WORKERS) --maxprocesses 4 --maxschedchunk 1 --durations=30 $(PYTEST_ARGS)
