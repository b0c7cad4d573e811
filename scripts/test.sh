#!/usr/bin/env bash
# The whole check: lint, types, import contracts, then the test suite against SQLite and a real Neo4j.
# Starts the embedded Neo4j when NEO4J_URI is not given, and stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

echo "== ruff"; $BIN/ruff check . && $BIN/ruff format --check .
echo "== mypy"; $BIN/mypy
echo "== import contracts"; $BIN/lint-imports --no-cache

started=""
cleanup() { if [ -n "$started" ]; then bash tools/neo4j/neo4j.sh down >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT
if [ -z "${NEO4J_URI:-}" ]; then
  if ! bash tools/neo4j/neo4j.sh status >/dev/null 2>&1; then started=1; fi
  echo "== neo4j"
  out=$(bash tools/neo4j/neo4j.sh up) || { echo "$out"; echo "Neo4j did not start" >&2; exit 1; }
  NEO4J_URI=$(printf '%s\n' "$out" | tail -n 1)
  export NEO4J_URI
  echo "Neo4j at $NEO4J_URI"
fi

echo "== pytest"
$BIN/pytest "$@"
