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
"$root/.venv/bin/python" -m pip install --quiet -e "$root[test,bench]"
