# Two commands on a fresh machine (Python 3.10+ and make): `make demo` and `make test`.
# Each creates .venv and installs what it needs on first use. `make test PYTHON=python3.13`
# builds .venv with another interpreter: a PYTHON given on the command line (or in the
# environment) that is not the one .venv was made with rebuilds .venv with it; a plain `make`
# keeps the interpreter .venv has.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
PYTHON_GIVEN := $(filter command line environment,$(origin PYTHON))
INTERPRETER = import os, sys; print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))

.PHONY: demo test test-pythons lint typecheck check bench soak clean FORCE

$(STAMP): pyproject.toml $(if $(PYTHON_GIVEN),FORCE)
	@if [ -x $(BIN)/python ] && [ -z "$(PYTHON_GIVEN)" ]; then :; \
	else \
		command -v "$(PYTHON)" >/dev/null 2>&1 || { \
			echo "No Python at PYTHON=$(PYTHON): thinkagent needs Python 3.10 or newer; install one,"; \
			echo "or name it: make $(or $(MAKECMDGOALS),test) PYTHON=/path/to/python3.X"; exit 1; }; \
		"$(PYTHON)" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { \
			echo "thinkagent needs Python 3.10 or newer; PYTHON=$(PYTHON) is $$("$(PYTHON)" -V 2>&1)."; \
			echo "Name a newer one: make $(or $(MAKECMDGOALS),test) PYTHON=/path/to/python3.X"; exit 1; }; \
		want=$$("$(PYTHON)" -c '$(INTERPRETER)'); \
		have=$$($(BIN)/python -c '$(INTERPRETER)' 2>/dev/null); \
		if [ "$$want" != "$$have" ]; then \
			[ -z "$$have" ] || echo "Rebuilding $(VENV) with $$want (it was made with $$have)"; \
			[ ! -d $(VENV)/pythons ] || mv $(VENV)/pythons $(VENV)-pythons.keep; \
			"$(PYTHON)" -m venv --clear $(VENV) || exit 1; \
			[ ! -d $(VENV)-pythons.keep ] || mv $(VENV)-pythons.keep $(VENV)/pythons; \
		elif [ -f $@ ] && [ $@ -nt pyproject.toml ]; then exit 0; fi; \
	fi; \
	$(BIN)/python -m pip install --quiet --upgrade pip && \
	$(BIN)/python -m pip install --quiet -e ".[dev]" && touch $@

FORCE:

## Run the demo: the emulator without API keys, the real services with them.
## One provider only: make demo DEMOS=gemini_thinking
DEMOS ?= thinking bedrock_thinking gemini_thinking openai_thinking deepseek_thinking
demo: $(STAMP)
	@for demo in $(DEMOS); do \
		echo; echo "=== examples/$$demo.py"; \
		$(BIN)/python examples/$$demo.py || exit 1; \
	done

## Run the test suite (offline: every provider is served by the emulator).
test: $(STAMP)
	$(BIN)/python -m pytest

## The core and reliability tests (cancellation and timeouts included) and the documents' code
## blocks (tests/test_docs.py: each README and docs/ block as presented) on every supported Python
## found: pyenv's ($(PYENV_ROOT)/versions/3.X.*), else python3.X on the PATH; one venv each, in
## .venv/pythons/. An interpreter that is not installed is skipped with a line that says so.
## One version only: make test-pythons PYTHONS=3.12; all but one: make test-pythons EXCEPT=3.11
PYTHONS ?= 3.10 3.11 3.12 3.13
EXCEPT ?=
PYENV_ROOT ?= $(HOME)/.pyenv
PYTHON_TESTS ?= tests/core tests/reliability tests/test_docs.py
test-pythons:
	@status=0; for version in $(filter-out $(EXCEPT),$(PYTHONS)); do \
		python=$$(ls -d $(PYENV_ROOT)/versions/$$version.*/bin/python 2>/dev/null | sort -V | tail -n 1); \
		[ -n "$$python" ] || python=$$(command -v python$$version || true); \
		if [ -z "$$python" ] || ! "$$python" -c 'import sys' 2>/dev/null; then \
			echo "=== Python $$version: not installed, skipped"; continue; \
		fi; \
		venv=$(VENV)/pythons/$$version; \
		echo "=== Python $$version ($$python)"; \
		if [ ! -f $$venv/.installed ] || [ pyproject.toml -nt $$venv/.installed ]; then \
			"$$python" -m venv --clear $$venv && \
			$$venv/bin/python -m pip install --quiet --upgrade pip && \
			$$venv/bin/python -m pip install --quiet -e ".[dev]" && \
			touch $$venv/.installed || { status=1; continue; }; \
		fi; \
		$$venv/bin/python -m pytest -p no:cacheprovider $(PYTHON_TESTS) || status=1; \
	done; exit $$status

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/pyright

check: test lint typecheck

## Benchmarks (not part of the tests): overhead vs the raw SDKs, emulator throughput, and
## client CPU per request on long histories against the raw SDKs and json.dumps.
bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/emulator_throughput.py
	$(BIN)/python benchmarks/long_history.py

## The soak (not in CI): 1,000 concurrent runs per wire API against a standalone emulator (1.5 min
## on two shared cores alone: SOAK_ARGS="--turns 0"), then one conversation grown to 250 turns per
## wire API (longer). make soak SOAK_ARGS="--runs 200"
soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py $(SOAK_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

## The FastAPI chat example (examples/fastapi_chat): serves http://127.0.0.1:8000 (PORT=...),
## on the emulator without API keys, on the provider whose key is set otherwise.
.PHONY: chat
chat: $(STAMP)
	$(BIN)/python examples/fastapi_chat/app.py
