# The two commands: `make run` (bring the platform up) and `make test` (run the whole suite).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python requirements.txt requirements-dev.txt
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

run: install
	./scripts/run.sh

test: install
	$(BIN)/pytest -q
