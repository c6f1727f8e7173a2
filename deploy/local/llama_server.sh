#!/usr/bin/env bash
# Local llama.cpp server (llama-cpp-python) serving a packaged GGUF model (deploy/local/gguf_path.py:
# Qwen2.5-Coder 1.5B or 0.5B Instruct, Gemma 3 270M) over the OpenAI API. Needs the `llama` extra
# of pyproject.toml.
#
# Usage: llama_server.sh start|stop|status|restart
#   start prints the OpenAI base URL (http://HOST:PORT/v1) on stdout once GET /v1/models answers;
#   it is a no-op (same output) when the server is already running.
#
# Environment (all optional):
#   LLAMA_HOME_DIR           pid file, log and assembled model      (default <repo>/data/llama)
#   LLAMA_HOST               listen address                         (default 127.0.0.1)
#   LLAMA_PORT               listen port                            (default 8088)
#   LLAMA_LOCAL_MODEL        packaged model: qwen2.5-1.5b, qwen2.5-0.5b or gemma3-270m
#                            (default qwen2.5-1.5b; the setting llm.local_model)
#   LLAMA_MODEL              a .gguf file       (default: the packaged LLAMA_LOCAL_MODEL)
#   LLAMA_MODEL_ALIAS        model id served by /v1/models          (default LLAMA_LOCAL_MODEL)
#   LLAMA_CHAT_FORMAT        llama-cpp-python chat template  (default: gemma for gemma3-270m,
#                            else the template stored in the GGUF)
#   LLAMA_N_CTX              context window in tokens               (default 8192)
#   LLAMA_THREADS            CPU threads for generation and prompt  (default: nproc)
#   OMP_WAIT_POLICY          OpenMP idle threads: spin or sleep     (default PASSIVE)
#   LLAMA_STARTUP_TIMEOUT_S  seconds to wait for /v1/models         (default 120)
#   LLAMA_STOP_TIMEOUT_S     seconds to wait after SIGTERM          (default 30)
#   LLAMA_PYTHON             python with llama-cpp-python[server]   (default <repo>/.venv/bin/python)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/../.." && pwd)"

LLAMA_HOME_DIR="${LLAMA_HOME_DIR:-$REPO_DIR/data/llama}"
LLAMA_HOST="${LLAMA_HOST:-127.0.0.1}"
LLAMA_PORT="${LLAMA_PORT:-8088}"
LLAMA_LOCAL_MODEL="${LLAMA_LOCAL_MODEL:-qwen2.5-1.5b}"
LLAMA_MODEL="${LLAMA_MODEL:-}"
LLAMA_MODEL_ALIAS="${LLAMA_MODEL_ALIAS:-$LLAMA_LOCAL_MODEL}"
if [[ "$LLAMA_LOCAL_MODEL" == gemma3-270m ]]; then
  # The Gemma 270M GGUF is a base model without a chat template: without this, llama-cpp-python
  # picks a wrong one and the answers are garbage.
  LLAMA_CHAT_FORMAT="${LLAMA_CHAT_FORMAT:-gemma}"
else
  # Empty: llama-cpp-python reads the chat template from the GGUF's metadata (ChatML for Qwen).
  LLAMA_CHAT_FORMAT="${LLAMA_CHAT_FORMAT:-}"
fi
LLAMA_N_CTX="${LLAMA_N_CTX:-8192}"
LLAMA_THREADS="${LLAMA_THREADS:-$(nproc)}"
# Spinning OpenMP workers starve each other when other processes share the cores: measured here
# on 2 busy cores, 40 tokens took 4.5-21 s with the default (ACTIVE) and 2.0-2.5 s with PASSIVE.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
LLAMA_STARTUP_TIMEOUT_S="${LLAMA_STARTUP_TIMEOUT_S:-120}"
LLAMA_STOP_TIMEOUT_S="${LLAMA_STOP_TIMEOUT_S:-30}"
LLAMA_PYTHON="${LLAMA_PYTHON:-$REPO_DIR/.venv/bin/python}"

PID_FILE="$LLAMA_HOME_DIR/llama.pid"
LOG_FILE="$LLAMA_HOME_DIR/llama.log"
BASE_URL="http://$LLAMA_HOST:$LLAMA_PORT/v1"
POLL_S=0.2  # seconds between readiness / exit checks

log() { printf 'llama: %s\n' "$*" >&2; }

running_pid() {
  # Prints the pid of a live server started by this script, else nothing.
  [[ -f "$PID_FILE" ]] || return 0
  local pid
  pid="$(cat "$PID_FILE")"
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
      && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "llama_cpp.server"; then
    printf '%s\n' "$pid"
  fi
}

answers() {
  curl -fsS --max-time 5 -o /dev/null "$BASE_URL/models" 2>/dev/null
}

port_in_use() {
  (exec 3<>"/dev/tcp/$LLAMA_HOST/$LLAMA_PORT") 2>/dev/null
}

wait_ready() {
  # Polls /v1/models until it answers; fails if the process dies or the timeout passes.
  local pid="$1" deadline=$((SECONDS + LLAMA_STARTUP_TIMEOUT_S))
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "process $pid exited; last lines of $LOG_FILE:"
      tail -n 40 "$LOG_FILE" >&2 || true
      return 1
    fi
    if ((SECONDS >= deadline)); then
      log "no answer on $BASE_URL after ${LLAMA_STARTUP_TIMEOUT_S}s; see $LOG_FILE"
      return 1
    fi
    sleep "$POLL_S"
  done
}

model_path() {
  if [[ -n "$LLAMA_MODEL" ]]; then
    printf '%s\n' "$LLAMA_MODEL"
  else
    "$LLAMA_PYTHON" "$SCRIPT_DIR/gguf_path.py" --dir "$LLAMA_HOME_DIR/models" \
      --model "$LLAMA_LOCAL_MODEL"
  fi
}

do_start() {
  local pid model started=$SECONDS
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    wait_ready "$pid"
    log "already running (pid $pid)"
    printf '%s\n' "$BASE_URL"
    return 0
  fi
  rm -f "$PID_FILE"
  if port_in_use; then
    log "port $LLAMA_PORT is already taken by another process; set LLAMA_PORT"
    return 1
  fi
  mkdir -p "$LLAMA_HOME_DIR"
  model="$(model_path)"
  local format_args=()
  [[ -z "$LLAMA_CHAT_FORMAT" ]] || format_args=(--chat_format "$LLAMA_CHAT_FORMAT")
  log "starting $model on $BASE_URL ($LLAMA_THREADS threads, n_ctx $LLAMA_N_CTX)"
  # setsid: the server outlives the shell (and the test session's process group) that started it.
  setsid "$LLAMA_PYTHON" -m llama_cpp.server \
    --model "$model" --model_alias "$LLAMA_MODEL_ALIAS" "${format_args[@]}" \
    --host "$LLAMA_HOST" --port "$LLAMA_PORT" --n_ctx "$LLAMA_N_CTX" \
    --n_threads "$LLAMA_THREADS" --n_threads_batch "$LLAMA_THREADS" --n_gpu_layers 0 \
    >>"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  printf '%s\n' "$pid" >"$PID_FILE"
  if ! wait_ready "$pid"; then
    do_stop
    return 1
  fi
  log "ready (pid $pid) after $((SECONDS - started))s"
  printf '%s\n' "$BASE_URL"
}

do_stop() {
  local pid deadline=$((SECONDS + LLAMA_STOP_TIMEOUT_S))
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    rm -f "$PID_FILE"
    log "not running"
    return 0
  fi
  log "stopping pid $pid"
  kill -TERM "$pid"
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
    sleep "$POLL_S"
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still alive after ${LLAMA_STOP_TIMEOUT_S}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
  log "stopped"
}

do_status() {
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    echo "stopped"
    return 3
  fi
  if answers; then
    echo "running (pid $pid) on $BASE_URL"
    return 0
  fi
  echo "running (pid $pid) but not answering on $BASE_URL"
  return 1
}

case "${1:-}" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  restart) do_stop && do_start ;;
  *)
    echo "usage: $0 start|stop|status|restart" >&2
    exit 2
    ;;
esac
