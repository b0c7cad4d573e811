# sgam — every target installs what it needs first.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test lint typecheck unit neo4j-up neo4j-down bench replay clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## Run the service on the embedded SQLite store (http://127.0.0.1:8080/docs).
run: $(STAMP)
	$(BIN)/sgam serve

## Everything CI checks: ruff, mypy, import contracts, then every test on SQLite and Neo4j.
test: $(STAMP)
	bash scripts/test.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

## Start the embedded Neo4j (prints its bolt URI last) / stop it.
neo4j-up:
	@bash tools/neo4j/neo4j.sh up

neo4j-down:
	@bash tools/neo4j/neo4j.sh down

replay: $(STAMP)
	$(BIN)/sgam replay examples/scenarios/mira.json --store sqlite:///.sgam/replay.db

bench: $(STAMP)
	@echo "see bench/README.md for each benchmark's command"

clean:
	rm -rf .sgam .mypy_cache .ruff_cache .pytest_cache .hypothesis
