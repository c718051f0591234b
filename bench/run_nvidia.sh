#!/usr/bin/env bash
# Both sides of the op benchmark in one call on an NVIDIA machine: the
# PyTorch reference (bench/torch_ref.py) then glc-bench-ops with it, then
# the session benchmark and the hazard micro-benchmark.
set -eu
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
python3 bench/torch_ref.py "$@" > "$out/torch_ref.json"
cat "$out/torch_ref.json"
GLC_REF="$out/torch_ref.json" build/glc-bench-ops "$@"
GLC_COMMIT=${GLC_COMMIT:-?} build/glc-bench "$@"
build/bench_hazard
