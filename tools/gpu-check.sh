#!/usr/bin/env bash
# The GPU device check in two halves.
#   bash tools/gpu-check.sh prepare   here (MLIR wheels): export Dense and BatchMatmul for the H200
#                                     into gpu-export/ (a few hundred KB; travels with the tree)
#   bash tools/gpu-check.sh run       on the GPU machine: python3 tools/gpu_check.py gpu-export
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
case "${1:-}" in
  prepare)
    target="${TARGET:-cuda:h200}"
    .venv/bin/ftuner export --model dense --target "$target" -o gpu-export/dense
    .venv/bin/ftuner export --model batch_matmul --target "$target" -o gpu-export/bmm ;;
  run)
    shift
    exec python3 tools/gpu_check.py gpu-export "$@" ;;
  *) echo "usage: $0 prepare|run [--quick]" >&2; exit 2 ;;
esac
