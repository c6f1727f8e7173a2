#!/usr/bin/env bash
# The whole test suite on a fresh machine: install, start the real services, lint, type-check,
# and run every test (unit, integration against real services, e2e through HTTP and workers,
# the web console in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/../.."

bash deploy/local/setup.sh
mkdir -p data/run && chmod 700 data/run
export XDG_RUNTIME_DIR="$PWD/data/run"

echo "== ruff"; .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== mypy"; .venv/bin/mypy .

.venv/bin/python deploy/local/services.py start --neo4j
trap '.venv/bin/python deploy/local/services.py stop' EXIT
echo "== pytest"
.venv/bin/pytest -q -p no:cacheprovider "$@"
