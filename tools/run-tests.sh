#!/usr/bin/env bash
# Install (tools/setup-venv.sh), then run the whole suite: lit + FileCheck IR tests, then pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/tools/setup-venv.sh"
cd "$root"
.venv/bin/lit -sv test
.venv/bin/python -m pytest -q test "$@"
