# Two commands on a fresh machine (Python 3.10+ and make): `make demo` and `make test`.
# Each creates .venv and installs what it needs on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint typecheck check bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "thinkagent needs Python 3.10 or newer (set PYTHON=...)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@

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

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/pyright

check: test lint typecheck

## Benchmarks (not part of the tests): overhead vs the raw SDKs, emulator throughput.
bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/emulator_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

## The FastAPI chat example (examples/fastapi_chat): serves http://127.0.0.1:8000 (PORT=...),
## on the emulator without API keys, on the provider whose key is set otherwise.
.PHONY: chat
chat: $(STAMP)
	$(BIN)/python examples/fastapi_chat/app.py
