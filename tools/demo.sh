#!/usr/bin/env bash
# Install (tools/setup-venv.sh), then run the main job: the Dense layer compiled once, run on many shapes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/tools/setup-venv.sh"
exec "$root/.venv/bin/ftuner" demo "$@"
