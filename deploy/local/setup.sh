#!/usr/bin/env bash
# Install what the backend needs on a fresh Debian machine: system packages, the Python
# environment (.venv, via uv) and the Maven-built Neo4j + APOC. Safe to run again: each step
# skips what is already there, and uv, pip and Maven keep their caches (~/.cache, ~/.m2).
set -euo pipefail
cd "$(dirname "$0")/../.."

APT_PACKAGES=(redis-server tesseract-ocr tesseract-ocr-eng tesseract-ocr-fra chromium chromium-driver)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
"$PYTHON" -m uv --version >/dev/null 2>&1 || "$PYTHON" -m pip install -q uv
[ -x .venv/bin/python ] || "$PYTHON" -m uv venv -q --python "$PYTHON" .venv
# llama-cpp-python ships only a source distribution: building llama.cpp takes 5 to 15 minutes
# on 2 cores. The wheel is built once into a wheelhouse under the user's cache and reused.
LLAMA_CPP_VERSION=$(sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
WHEELHOUSE="${XDG_CACHE_HOME:-$HOME/.cache}/graphrag/wheels"
if ! ls "$WHEELHOUSE"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_CPP_VERSION once into $WHEELHOUSE (several minutes)"
  mkdir -p "$WHEELHOUSE"
  "$PYTHON" -m pip wheel -q --no-deps -w "$WHEELHOUSE" "llama-cpp-python==$LLAMA_CPP_VERSION"
fi
"$PYTHON" -m uv pip install -q --python .venv/bin/python --find-links "$WHEELHOUSE" \
  -e '.[embedded,dev,llama]'

bash deploy/neo4j/run.sh build
