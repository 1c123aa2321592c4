#!/usr/bin/env bash
# The real-GPU check of issue 20, as one command on the device machine (docs/measure.md,
# "On a real GPU"): gpurig gpus beside nvidia-smi -q, gpurig bench --quick and the full
# bench, the same copies and a single-GPU all-reduce through PyTorch, then the side-by-side
# table. Everything lands under $OUT (or ./gpu-out); the table is printed last.
# It only reads: no clock, power limit or mode of the GPU is changed.
# usage (from the repository root, on the GPU machine): bash bench/gpu/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}
mkdir -p "$out"
log() { echo "== $*" | tee -a "$out/log.txt"; }
if [ -x bench/gpu/bundle/gpurig ]; then
  # built on the development machine by bench/gpu/bundle.sh, with its libraries
  export LD_LIBRARY_PATH=$PWD/bench/gpu/bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export GPURIG_DATA=$PWD/bench/gpu/bundle/data
  gpurig=$PWD/bench/gpu/bundle/gpurig
else
  log "building gpurig here"
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/build.txt" 2>&1 &&
    cmake --build build-gpu -j 8 >>"$out/build.txt" 2>&1 || { tail -20 "$out/build.txt"; exit 3; }
  export GPURIG_DATA=$PWD/data
  gpurig=$PWD/build-gpu/gpurig
fi
log "nvidia-smi -q";            nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
log "gpurig gpus";              "$gpurig" gpus >"$out/gpus.txt" 2>&1; echo "rc=$?" >>"$out/gpus.txt"
"$gpurig" gpus --json >"$out/gpus.json" 2>>"$out/log.txt"
log "gpurig bench --quick";     /usr/bin/time -p "$gpurig" bench --quick --no-progress --json >"$out/bench-quick.json" 2>"$out/bench-quick.err"
"$gpurig" bench --quick --no-progress >"$out/bench-quick.txt" 2>&1
log "gpurig bench";             /usr/bin/time -p "$gpurig" bench --no-progress --json >"$out/bench.json" 2>"$out/bench.err"
log "PyTorch, the same copies"; python3 bench/gpu/torch_copies.py >"$out/torch.json" 2>"$out/torch.err"
log "side by side"
python3 bench/gpu/compare.py "$out/bench.json" "$out/torch.json" | tee "$out/table.md"
grep -h real "$out/bench-quick.err" "$out/bench.err" | sed 's/^/wall seconds: /'
