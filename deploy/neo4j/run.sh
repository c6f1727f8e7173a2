#!/usr/bin/env bash
# Local Neo4j 5.26 community + APOC core, built from Maven Central, for development and tests.
#
# Usage: run.sh build|start|stop|status|restart
#
# Environment (all optional):
#   NEO4J_HOME_DIR           store, logs and pid file        (default <repo>/data/neo4j)
#   NEO4J_BOLT_PORT          Bolt port on 127.0.0.1          (default 7697)
#   NEO4J_PASSWORD           password of user neo4j          (default graphrag-local)
#   NEO4J_HEAP               JVM heap, -Xms and -Xmx         (default 1g)
#   NEO4J_PAGECACHE          Neo4j page cache                (default 256m)
#   NEO4J_JVM_OPTIONS        more JVM options, space-separated (default none)
#   NEO4J_CONFIG_FILE        Neo4j settings loaded at start  (default <repo>/deploy/neo4j/neo4j.conf:
#                            the procedure allowlist the production stack uses too)
#   NEO4J_STARTUP_TIMEOUT_S  seconds to wait for Bolt        (default 120)
#   NEO4J_STOP_TIMEOUT_S     seconds to wait after SIGTERM   (default 60)
#   NEO4J_PYTHON             python with the neo4j driver    (default <repo>/.venv/bin/python)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/../.." && pwd)"

NEO4J_HOME_DIR="${NEO4J_HOME_DIR:-$REPO_DIR/data/neo4j}"
NEO4J_BOLT_PORT="${NEO4J_BOLT_PORT:-7697}"
NEO4J_PASSWORD="${NEO4J_PASSWORD:-graphrag-local}"
NEO4J_HEAP="${NEO4J_HEAP:-1g}"
NEO4J_PAGECACHE="${NEO4J_PAGECACHE:-256m}"
NEO4J_STARTUP_TIMEOUT_S="${NEO4J_STARTUP_TIMEOUT_S:-120}"
NEO4J_STOP_TIMEOUT_S="${NEO4J_STOP_TIMEOUT_S:-60}"
NEO4J_PYTHON="${NEO4J_PYTHON:-$REPO_DIR/.venv/bin/python}"
NEO4J_CONFIG_FILE="${NEO4J_CONFIG_FILE:-$SCRIPT_DIR/neo4j.conf}"
export NEO4J_PASSWORD NEO4J_PAGECACHE

TARGET_DIR="$SCRIPT_DIR/target"
LAUNCHER_JAR="$TARGET_DIR/neo4j-local-launcher.jar"
PID_FILE="$NEO4J_HOME_DIR/neo4j.pid"
READY_FILE="$NEO4J_HOME_DIR/neo4j.ready"  # written by the launcher once the password is set
LOG_DIR="$NEO4J_HOME_DIR/logs"
LAUNCHER_LOG="$LOG_DIR/launcher.log"
BOLT_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT"

# JVM options from Neo4j's own server defaults (reflective access for the page cache and
# native I/O, Netty settings); AlwaysPreTouch is left out to keep the footprint small.
JVM_OPTS=(
  "-Xms$NEO4J_HEAP" "-Xmx$NEO4J_HEAP"
  -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow -XX:+DisableExplicitGC
  -XX:+UnlockExperimentalVMOptions -XX:+TrustFinalNonStaticFields
  -Djdk.nio.maxCachedBufferSize=1024 -Dio.netty.tryReflectionSetAccessible=true
  -Dlog4j2.disable.jmx=true
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
)
read -r -a MORE_JVM_OPTS <<<"${NEO4J_JVM_OPTIONS:-}"
JVM_OPTS+=("${MORE_JVM_OPTS[@]}")

log() { printf 'neo4j: %s\n' "$*" >&2; }

needs_build() {
  [[ -f "$LAUNCHER_JAR" && -d "$TARGET_DIR/lib" && -d "$TARGET_DIR/plugins" ]] || return 0
  [[ -n "$(find "$SCRIPT_DIR/pom.xml" "$SCRIPT_DIR/src" -newer "$LAUNCHER_JAR" -print -quit)" ]]
}

do_build() {
  if needs_build; then
    log "building launcher and dependencies with Maven"
    rm -rf "$TARGET_DIR/lib" "$TARGET_DIR/plugins"
    mvn -q -B -Dstyle.color=never -f "$SCRIPT_DIR/pom.xml" package
  fi
}

running_pid() {
  # Prints the pid of a live server started by this script, else nothing.
  [[ -f "$PID_FILE" ]] || return 0
  local pid
  pid="$(cat "$PID_FILE")"
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
      && grep -q "neo4j-local-launcher" "/proc/$pid/cmdline" 2>/dev/null; then
    printf '%s\n' "$pid"
  fi
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$NEO4J_BOLT_PORT") 2>/dev/null
}

wait_ready() {
  local timeout="$1" pid="$2"
  "$NEO4J_PYTHON" "$SCRIPT_DIR/wait_ready.py" --uri "$BOLT_URI" --user neo4j \
    --timeout "$timeout" --pid "$pid" --ready-file "$READY_FILE"
}

do_start() {
  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    if wait_ready "$NEO4J_STARTUP_TIMEOUT_S" "$pid"; then
      log "already running (pid $pid) on $BOLT_URI"
      return 0
    fi
    log "process $pid does not answer on $BOLT_URI; see $LAUNCHER_LOG"
    return 1
  fi
  rm -f "$PID_FILE" "$READY_FILE"
  if port_in_use; then
    log "port $NEO4J_BOLT_PORT is already taken by another process; set NEO4J_BOLT_PORT"
    return 1
  fi
  do_build
  mkdir -p "$LOG_DIR"
  log "starting on $BOLT_URI (home $NEO4J_HOME_DIR)"
  local started=$SECONDS
  nohup java "${JVM_OPTS[@]}" -jar "$LAUNCHER_JAR" \
    --home "$NEO4J_HOME_DIR" --port "$NEO4J_BOLT_PORT" --plugins "$TARGET_DIR/plugins" \
    --config "$NEO4J_CONFIG_FILE" \
    >>"$LAUNCHER_LOG" 2>&1 </dev/null &
  pid=$!
  printf '%s\n' "$pid" >"$PID_FILE"
  if ! wait_ready "$NEO4J_STARTUP_TIMEOUT_S" "$pid" || ! kill -0 "$pid" 2>/dev/null; then
    log "not ready after $((SECONDS - started))s; last lines of $LAUNCHER_LOG:"
    tail -n 40 "$LAUNCHER_LOG" >&2 || true
    log "last lines of $LOG_DIR/debug.log:"
    tail -n 20 "$LOG_DIR/debug.log" >&2 2>/dev/null || true
    if kill -0 "$pid" 2>/dev/null; then
      log "pid $pid is still alive: 'run.sh status' to check again, 'run.sh stop' to end it"
    fi
    return 1
  fi
  log "ready (pid $pid) on $BOLT_URI after $((SECONDS - started))s"
}

do_stop() {
  local pid waited=0
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    rm -f "$PID_FILE" "$READY_FILE"
    log "not running"
    return 0
  fi
  log "stopping pid $pid"
  kill -TERM "$pid"
  while kill -0 "$pid" 2>/dev/null && ((waited < NEO4J_STOP_TIMEOUT_S)); do
    sleep 1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still alive after ${NEO4J_STOP_TIMEOUT_S}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE" "$READY_FILE"
  log "stopped"
}

do_status() {
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    echo "stopped"
    return 3
  fi
  if wait_ready 0 "$pid" 2>/dev/null; then
    echo "running (pid $pid) on $BOLT_URI"
    return 0
  fi
  echo "running (pid $pid) but not answering on $BOLT_URI"
  return 1
}

case "${1:-}" in
  build) do_build ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  restart) do_stop && do_start ;;
  *)
    echo "usage: $0 build|start|stop|status|restart" >&2
    exit 2
    ;;
esac
