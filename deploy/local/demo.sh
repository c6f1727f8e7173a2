#!/usr/bin/env bash
# The main job end to end on the embedded default: start the services (PostgreSQL + pgvector,
# Redis, Neo4j + APOC, llama.cpp with a small real model), migrate, start a worker, ingest the
# sample documents into a graph-enabled knowledge base, and query what was built.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash deploy/local/setup.sh
mkdir -p data/run data/logs && chmod 700 data/run
export XDG_RUNTIME_DIR="$PWD/data/run"

.venv/bin/python deploy/local/services.py start --neo4j --llama
set -a; source data/services.env; set +a
export NEO4J_ENABLE=true
# Bound the local model's extraction replies (one sample chunk's JSON takes about 200 tokens)
# so that a reply that loops ends within minutes on 2 cores. Real deployments keep the
# settings' 8192 so that long extractions are never cut short.
export LLM_MAX_TOKENS="${LLM_MAX_TOKENS:-768}"
# llama-cpp-python's server runs one request at a time and reports no slots: a second call
# sent at once would only wait in its queue, and time out there on busy cores.
export LLM_CONCURRENCY_LIMIT="${LLM_CONCURRENCY_LIMIT:-1}"
export LLM_TIMEOUT_S="${LLM_TIMEOUT_S:-600}"

.venv/bin/graphrag migrate
.venv/bin/graphrag worker --beat > data/logs/demo-worker.log 2>&1 &
WORKER_PID=$!
trap 'kill $WORKER_PID 2>/dev/null || true; wait $WORKER_PID 2>/dev/null || true' EXIT

.venv/bin/graphrag demo deploy/local/samples
