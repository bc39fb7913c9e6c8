# The two commands: `make run` brings the platform up (scripts/run.sh); `make test` runs `make lint`,
# then the whole suite in parallel. `make lint`: import-linter's layer contracts (.importlinter), no
# test asserting on a clock (scripts/check_test_clocks.py), every repository path the docs name
# resolving (scripts/check_doc_paths.py), the alert rules (promtool, from Debian's prometheus
# package: `check rules` and their unit tests, monitoring/alerts.test.yml), and a strict build of the
# docs (mkdocs: a broken link or a page missing from mkdocs.yml's nav fails). `make docs` serves the docs.
#
# TEST_WORKERS: pytest-xdist workers, one more than the cores by default (tests that wait for
# servers and Chromium leave a core idle otherwise), at most 4 (each holds torch and a Redis
# database of its own); 0 runs serially. PYTEST_ARGS are appended. --maxschedchunk 1 hands tests
# out one at a time, so the slow ones (run first, see conftest.py) spread over the workers.
# Timings behind these choices: docs/develop/benchmarks.md.
#
# install: a venv without pip; this Python's pip installs uv into it, and uv installs the pinned
# requirements (faster than pip). uv reads no pip.conf, so FIND_LINKS passes it pip's find-links
# (PIP_FIND_LINKS, else pip.conf's global.find-links), where a machine may keep a CPU build of torch.
# PYTHONDONTWRITEBYTECODE is emptied so that the many processes a run starts reuse compiled modules.
export PYTHONDONTWRITEBYTECODE :=
# Material for MkDocs prints an end-of-life banner on every build; it says nothing about our pages.
export NO_MKDOCS_2_WARNING := 1
# PY: the Python that makes the venv: Debian's /usr/bin/python3.11 where it has pip (built with PGO
# and LTO: faster), else python3. `make install PY=python3` overrides it; an existing .venv keeps
# the Python it was made with.
SYSTEM_PY := $(shell /usr/bin/python3.11 -c 'import pip' 2>/dev/null && echo /usr/bin/python3.11)
PY ?= $(or $(SYSTEM_PY),python3)
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST_ARGS ?=
VENV ?= .venv
BIN := $(VENV)/bin
# make docs serves on DOCS_PORT, beside make run's 8000.
DOCS_PORT ?= 8001
PROMTOOL ?= promtool

.PHONY: install run test lint docs

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
	$(BIN)/python scripts/check_doc_paths.py
	@command -v $(PROMTOOL) >/dev/null || { echo "promtool not found: apt-get install prometheus (Debian's package)"; exit 1; }
	$(PROMTOOL) check rules monitoring/alerts.yml
	$(PROMTOOL) test rules monitoring/alerts.test.yml
	$(BIN)/mkdocs build --strict --quiet --site-dir site

docs: install
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

test: lint
	$(BIN)/pytest -q -n $(TEST_WORKERS) --maxprocesses 4 --maxschedchunk 1 --durations=30 $(PYTEST_ARGS)
