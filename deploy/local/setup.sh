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
# llama-cpp-python ships only a source distribution: building llama.cpp takes 4 to 15 minutes
# on 2 cores. The wheel is built once into a wheelhouse under the user's cache and reused.
# It is built for any x86-64 CPU with AVX2 (LLAMA_CMAKE_ARGS to change that), not for the
# building machine's: a native build uses every instruction the CPU lists, and on a virtual
# machine that lists AMX without granting it, the first request died on an AMX instruction.
# pip's own wheel cache is bypassed, since it would return a wheel built with other flags.
LLAMA_CPP_VERSION=$(sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
LLAMA_CMAKE_ARGS=${LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF}
WHEELHOUSE="${XDG_CACHE_HOME:-$HOME/.cache}/graphrag/wheels/cmake$(printf %s "$LLAMA_CMAKE_ARGS" | tr -c 'A-Za-z0-9=_-' '_')"
if ! ls "$WHEELHOUSE"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_CPP_VERSION once into $WHEELHOUSE (several minutes)"
  mkdir -p "$WHEELHOUSE"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$PYTHON" -m pip wheel -q --no-cache-dir --no-deps \
    -w "$WHEELHOUSE" "llama-cpp-python==$LLAMA_CPP_VERSION"
fi
"$PYTHON" -m uv pip install -q --python .venv/bin/python --find-links "$WHEELHOUSE" \
  --reinstall-package llama-cpp-python \
  -e '.[embedded,dev,llama]'
# Bytecode for every module, written once here: uv installs without it, and where
# PYTHONDONTWRITEBYTECODE is set (containers, CI) Python never caches it either, so every worker,
# API or CLI process compiled the whole dependency tree again as it started (2.5 s of CPU each
# here; the suite's CLI tests ran in 53 s instead of 28). Already compiled files are skipped.
PURELIB=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
.venv/bin/python -m compileall -q -j 0 "$PURELIB" graphrag api workers cli tests bench >/dev/null ||
  echo "note: some modules were not compiled to bytecode; they compile as they are imported"

bash deploy/neo4j/run.sh build
