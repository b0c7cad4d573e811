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
status=0
$BIN/pytest "$@" || status=$?
# A Neo4j internal error (a 503 the tests report as such) leaves its stack trace only in the
# server's debug.log, which stopping the server deletes: show it first.
if [ "$status" -ne 0 ] && [ -n "$started" ]; then
  datadir=$(cat "${SGAM_NEO4J_STATE_DIR:-.sgam/neo4j}/datadir" 2>/dev/null || true)
  log="$datadir/logs/debug.log"
  if [ -n "$datadir" ] && [ -f "$log" ] && grep -q " ERROR " "$log"; then
    echo "== Neo4j errors (from $log)"
    grep -A 40 " ERROR " "$log" | head -n 400
  fi
fi
exit "$status"
