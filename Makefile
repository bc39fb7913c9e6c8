# The two commands: `make run` (bring the platform up) and `make test` (check the layers, then run
# the whole suite, browser tests included, in parallel). `make lint` checks the import-linter
# contracts (.importlinter) and that no test asserts on elapsed time (scripts/check_test_clocks.py).
#
# TEST_WORKERS: pytest-xdist workers; by default one more than the CPU cores (nproc): 3 on the
# 2-core machines this project runs on. Two workers left the cores 14 % idle (86 % busy, sampled
# from /proc/stat over a run), as tests wait for their servers, workers and Chromium; a third
# fills those gaps (95 % busy) for the price of one more collection and forkserver, and
# `make test` took 0.92, 0.99 and 0.94 of the time with two, pairs run one after the other
# (benchmarks/test_workers.sh 2 3).
# At most 4 (each worker holds torch and its own processes in memory, and takes a Redis database
# of its own: base + worker number stays within Redis's 16). `make test TEST_WORKERS=0` runs
# serially. PYTEST_ARGS are appended (e.g. PYTEST_ARGS="-x -k leaderboard").
# --maxschedchunk 1: tests are handed out one at a time, so the slow ones (run first, see
# conftest.py) spread over the workers.
# install: the venv is made without pip (its ensurepip took 3.4 CPU-s, 7 s of a 19 s install), this
# Python's own pip installs uv (pinned below) into it (pip's --python), and uv installs the requirements: 12 s
# on a fresh clone with uv's cache (~/.cache/uv) filled (6 s in CI), about 38 s with it empty, against pip's 40
# to 90 s here (pip's cache stays empty on this machine; uv downloads and unpacks in parallel). uv does not read pip's configuration, so FIND_LINKS passes it pip's
# find-links (the PIP_FIND_LINKS variable, else pip.conf's global.find-links): where this machine's
# local torch CPU wheel is; without it, torch==2.13.0 would come from PyPI (CUDA, gigabytes). Like
# pip's --no-compile, uv compiles no bytecode: the platform and its tests import about 3,500 of the
# packages' 22,000 modules, and Python compiles those the first time they are imported (about
# 9 CPU-s, once) and caches them, as make lets it (below).
# PYTHONDONTWRITEBYTECODE is emptied: Python caches the project's compiled modules in __pycache__/
# (ignored by git) even where the environment asks it not to. Otherwise every process the suite or
# `make run` starts (workers, servers, manage.py commands: well over a hundred in `make test`)
# compiles the project's modules again, about 0.3 s each, and each pytest worker rewrites and
# compiles every test module again, about 5 s.
export PYTHONDONTWRITEBYTECODE :=
# PY: the Python that makes the venv: the system's CPython 3.11 where there is one with pip (to
# install uv with), /usr/bin/python3.11, Debian's: built with profile-guided optimisation and LTO,
# libpython linked into the executable; else python3. On this project's machines python3 is pyenv's
# 3.11.7, built with neither, on a shared libpython: `make test` from a fresh clone took 290 s on
# average under it and 269 s under Debian's (0.93; two runs each, alternating: PAIRS=2
# benchmarks/fresh_clone_test.sh). `make install PY=python3` keeps python3; an existing .venv keeps
# the Python it was made with (rm -rf .venv to change it).
SYSTEM_PY := $(shell /usr/bin/python3.11 -c 'import pip' 2>/dev/null && echo /usr/bin/python3.11)
PY ?= $(or $(SYSTEM_PY),python3)
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST_ARGS ?=
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test lint

UV_VERSION := 0.13.9
FIND_LINKS ?= $(or $(PIP_FIND_LINKS),$(shell $(PY) -m pip config get global.find-links 2>/dev/null))

$(BIN)/uv:
	$(PY) -m venv --without-pip $(VENV)
	$(PY) -m pip --python $(BIN)/python install -q uv==$(UV_VERSION)

$(VENV)/.installed: $(BIN)/uv requirements.txt requirements-dev.txt dynabench_client/pyproject.toml
	$(BIN)/uv pip install -q --python $(BIN)/python $(addprefix --find-links ,$(FIND_LINKS)) \
		-r requirements-dev.txt -e ./dynabench_client
	touch $@

install: $(VENV)/.installed

run: install
	./scripts/run.sh

lint: install
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_test_clocks.py

test: lint
	$(BIN)/pytest -q -n $(TEST_WORKERS) --maxprocesses 4 --maxschedchunk 1 --durations=30 $(PYTEST_ARGS)
