#!/usr/bin/env bash
# Create ./.venv (once) and install ftuner-mlir with its pinned MLIR wheels and test tools.
# pip keeps its download cache (~/.cache/pip), so a second run downloads nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
if [ ! -x "$root/.venv/bin/python" ]; then
  "$python" -m venv "$root/.venv"
fi
"$root/.venv/bin/python" -m pip install --quiet --upgrade pip >/dev/null
"$root/.venv/bin/python" -m pip install --quiet -e "$root[test,bench,torch]"
# compiled modules are linked into shared libraries with the system linker
if ! command -v cc >/dev/null 2>&1 && ! command -v ld >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq gcc >/dev/null
  else
    echo "setup-venv: no C compiler (cc) or ld on PATH; install gcc (compiled modules are linked with it)" >&2
    exit 1
  fi
fi
