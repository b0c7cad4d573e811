#!/usr/bin/env bash
# Start/stop an embedded Neo4j 2026.x Community server (Bolt on 127.0.0.1, auth off,
# data in a fresh temp dir) for tests and development where Docker is not available.
#
#   tools/neo4j/neo4j.sh up       build if needed, start (or reuse), print bolt URI as last stdout line
#   tools/neo4j/neo4j.sh down     stop the server started by this script, remove its data
#   tools/neo4j/neo4j.sh status   print the URI and exit 0 if running, else exit 1
#
# Env: SGAM_NEO4J_PORT (bolt port; default: a free port picked by the server),
#      SGAM_NEO4J_START_TIMEOUT (seconds, default 600), SGAM_NEO4J_JAVA_HOME (a JDK 21+;
#      default: JAVA_HOME if it is 21+, else the newest 21+ JDK under /usr/lib/jvm or
#      /opt/java), SGAM_NEO4J_JAVA_OPTS (extra JVM flags), SGAM_NEO4J_STATE_DIR (where the
#      state below lives; a test that needs a private server of its own sets it).
# Neo4j 2026.x needs Java 21 or later; the JDK found is used both to build and to run.
# State lives in <repo>/.sgam/neo4j/ (or SGAM_NEO4J_STATE_DIR): pid, uri, datadir,
# server.log, build.log.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
STATE_DIR="${SGAM_NEO4J_STATE_DIR:-$REPO_ROOT/.sgam/neo4j}"
PID_FILE="$STATE_DIR/pid"
URI_FILE="$STATE_DIR/uri"
DATADIR_FILE="$STATE_DIR/datadir"
SERVER_LOG="$STATE_DIR/server.log"
BUILD_LOG="$STATE_DIR/build.log"
LOCK_FILE="$STATE_DIR/lock"

TARGET_DIR="$SCRIPT_DIR/target"
JAR="$TARGET_DIR/sgam-embedded-neo4j.jar"
STAMP_FILE="$TARGET_DIR/.sgam-build-stamp"
JAR_MARK="sgam-embedded-neo4j.jar"

START_TIMEOUT="${SGAM_NEO4J_START_TIMEOUT:-600}"
STOP_TIMEOUT=30

JVM_FLAGS=(
  -Xms256m -Xmx1g
  -XX:+ExitOnOutOfMemoryError
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --enable-native-access=ALL-UNNAMED
  # Lucene scores vectors with SIMD only when the JDK's Vector API is readable; without it
  # the HNSW walk and index builds fall back to scalar loops (bench/README: 1.3-2x on vector
  # search).
  --add-modules=jdk.incubator.vector
  -Dio.netty.tryReflectionSetAccessible=true
  -Dlog4j2.disable.jmx=true
  -Dfile.encoding=UTF-8
)

log() { echo "neo4j.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The major version of a JDK home ("25" for 25.0.1, "17" for 17.0.15), or nothing.
jdk_major() {
  local home="$1" v
  [[ -x "$home/bin/java" && -x "$home/bin/javac" ]] || return 0
  v="$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n1)"
  echo "$v"
}

# A JDK home of version 21 or later: explicit setting, JAVA_HOME, then the newest found.
# Not a shell profile: CI runs with a bare environment.
jdk_home() {
  local h m best="" best_m=0
  if [[ -n "${SGAM_NEO4J_JAVA_HOME:-}" ]]; then
    m="$(jdk_major "$SGAM_NEO4J_JAVA_HOME")"
    [[ -n "$m" && "$m" -ge 21 ]] || die "SGAM_NEO4J_JAVA_HOME=$SGAM_NEO4J_JAVA_HOME is not a JDK 21+"
    echo "$SGAM_NEO4J_JAVA_HOME"; return
  fi
  if [[ -n "${JAVA_HOME:-}" ]]; then
    m="$(jdk_major "$JAVA_HOME")"
    if [[ -n "$m" && "$m" -ge 21 ]]; then echo "$JAVA_HOME"; return; fi
  fi
  for h in /usr/lib/jvm/* /opt/java/* /opt/jdk*; do
    [[ -d "$h" ]] || continue
    m="$(jdk_major "$h")"
    if [[ -n "$m" && "$m" -ge 21 && "$m" -gt "$best_m" ]]; then best="$h"; best_m="$m"; fi
  done
  [[ -n "$best" ]] || die "no JDK 21+ found (Neo4j 2026.x needs one): set SGAM_NEO4J_JAVA_HOME"
  echo "$best"
}

# Is the pid one of our launcher JVMs?
is_our_pid() {
  local pid="$1"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "$JAR_MARK"
}

port_answers() {
  local port="$1"
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null
}

uri_port() { sed -n 's#^bolt://[^:]*:\([0-9][0-9]*\).*#\1#p' "$1" 2>/dev/null | head -n1; }

# 0 if a server started by this script is alive and answering.
running() {
  [[ -f "$PID_FILE" && -f "$URI_FILE" ]] || return 1
  local pid port
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  is_our_pid "$pid" || return 1
  port="$(uri_port "$URI_FILE")"
  [[ -n "$port" ]] || return 1
  port_answers "$port"
}

remove_datadir() {
  [[ -f "$DATADIR_FILE" ]] || return 0
  local d
  d="$(cat "$DATADIR_FILE" 2>/dev/null || true)"
  # Only ever delete directories this script created.
  if [[ -n "$d" && -d "$d" && "$(basename "$d")" == sgam-neo4j.* ]]; then
    rm -rf -- "$d"
  fi
  rm -f "$DATADIR_FILE"
}

stop_pid() {
  local pid="$1" i
  is_our_pid "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 5; i++)); do
    is_our_pid "$pid" || return 0
    sleep 0.2
  done
  log "server pid $pid did not stop within ${STOP_TIMEOUT}s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}

cleanup_state() {
  local pid=""
  [[ -f "$PID_FILE" ]] && pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ -n "$pid" ]] && stop_pid "$pid"
  remove_datadir
  rm -f "$PID_FILE" "$URI_FILE" "$URI_FILE.tmp"
}

source_hash() {
  (
    cd "$SCRIPT_DIR"
    find pom.xml src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  ) | sha256sum | cut -d' ' -f1
}

build_if_needed() {
  local want
  want="$(source_hash)"
  if [[ -f "$JAR" && -d "$TARGET_DIR/lib" && -f "$STAMP_FILE" && "$(cat "$STAMP_FILE")" == "$want" ]]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found; needed to build the launcher"
  log "building the embedded Neo4j launcher (mvn package, log: $BUILD_LOG) ..."
  local t0=$SECONDS
  rm -f "$STAMP_FILE"
  local jdk
  jdk="$(jdk_home)"
  if ! (cd "$SCRIPT_DIR" && JAVA_HOME="$jdk" mvn -q -B -Dstyle.color=never package -DskipTests) > "$BUILD_LOG" 2>&1 < /dev/null; then
    tail -n 40 "$BUILD_LOG" >&2 || true
    die "maven build failed (full log: $BUILD_LOG)"
  fi
  [[ -f "$JAR" ]] || die "build finished but $JAR is missing"
  echo "$want" > "$STAMP_FILE"
  log "build done in $((SECONDS - t0))s"
}

fail_start() {
  local msg="$1" d
  log "ERROR: $msg"
  if [[ -f "$SERVER_LOG" ]]; then
    log "--- tail of $SERVER_LOG ---"
    tail -n 40 "$SERVER_LOG" >&2 || true
  fi
  d="$(cat "$DATADIR_FILE" 2>/dev/null || true)"
  if [[ -n "$d" && -f "$d/logs/debug.log" ]]; then
    log "--- tail of $d/logs/debug.log ---"
    grep -E "ERROR|WARN|Exception|Caused by" "$d/logs/debug.log" | tail -n 20 >&2 || true
  fi
  cleanup_state
  exit 1
}

cmd_up() {
  if running; then
    if [[ -n "${SGAM_NEO4J_PORT:-}" && "$(uri_port "$URI_FILE")" != "$SGAM_NEO4J_PORT" ]]; then
      log "warning: reusing running server on port $(uri_port "$URI_FILE"), not SGAM_NEO4J_PORT=$SGAM_NEO4J_PORT"
    fi
    cat "$URI_FILE"
    return 0
  fi
  # Stale state from a crashed or killed server.
  cleanup_state

  build_if_needed

  local port="${SGAM_NEO4J_PORT:-0}"
  [[ "$port" =~ ^[0-9]+$ ]] || die "SGAM_NEO4J_PORT must be a number, got '$port'"
  local java datadir
  java="$(jdk_home)/bin/java"
  datadir="$(mktemp -d "${TMPDIR:-/tmp}/sgam-neo4j.XXXXXXXX")"
  echo "$datadir" > "$DATADIR_FILE"

  local t0=$SECONDS
  # setsid: own session, so the caller's Ctrl-C / process-group kill doesn't hit it.
  # 9>&- : do not leak the lock fd into the long-lived server.
  # shellcheck disable=SC2086
  nohup setsid "$java" "${JVM_FLAGS[@]}" ${SGAM_NEO4J_JAVA_OPTS:-} \
    -jar "$JAR" --home "$datadir" --port "$port" --uri-file "$URI_FILE" \
    > "$SERVER_LOG" 2>&1 < /dev/null 9>&- &
  local pid=$!
  echo "$pid" > "$PID_FILE"

  local deadline=$((SECONDS + START_TIMEOUT))
  while true; do
    if ! kill -0 "$pid" 2>/dev/null; then
      fail_start "server process exited during startup"
    fi
    if [[ -f "$URI_FILE" ]]; then
      local p
      p="$(uri_port "$URI_FILE")"
      if [[ -n "$p" ]] && port_answers "$p"; then
        break
      fi
    fi
    if ((SECONDS >= deadline)); then
      fail_start "server did not accept Bolt connections within ${START_TIMEOUT}s"
    fi
    sleep 0.2
  done
  log "started pid $pid in $((SECONDS - t0))s, data in $datadir"
  cat "$URI_FILE"
}

cmd_down() {
  if [[ ! -f "$PID_FILE" && ! -f "$DATADIR_FILE" && ! -f "$URI_FILE" ]]; then
    log "not running"
    return 0
  fi
  cleanup_state
  log "stopped"
}

cmd_status() {
  if running; then
    cat "$URI_FILE"
    return 0
  fi
  return 1
}

main() {
  local cmd="${1:-}"
  case "$cmd" in
    up | down) ;;
    status) cmd_status; return $? ;;
    *) echo "usage: $0 {up|down|status}" >&2; return 2 ;;
  esac
  mkdir -p "$STATE_DIR"
  exec 9> "$LOCK_FILE"
  flock -w 600 9 || die "could not lock $LOCK_FILE"
  "cmd_$cmd"
}

main "$@"
