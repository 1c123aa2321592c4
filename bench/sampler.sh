#!/usr/bin/env bash
# What one sample of gpurig's sampler costs (gpurig watch and export repeat
# it): CPU time per sample and heap allocations per sample, as text and as
# JSON lines (watch --json: what a log pipeline reads), at 8 GPUs (the
# stand-in NVIDIA libraries' DGX A100 with the fixture tree hgx-a100: 8 GPUs,
# 20 watched PCIe links) and at 4 GPUs (epyc-riser). The difference between a
# long and a short run takes gpurig's start-up out. On a machine with NVIDIA
# GPUs, pass --real to sample the real driver and time nvidia-smi's
# `--query-gpu` loop beside it (the anchor tool), as a ratio.
# usage: bench/sampler.sh [GPURIG] [--real]   (from the repository root)
set -euo pipefail
gpurig=${1:-build/gpurig}
real=${2:-}
export GPURIG_DATA=${GPURIG_DATA:-$PWD/data}
short=11 long=311

cpu_of() { # command...: user+sys CPU seconds of the command
  local TIMEFORMAT='%U %S' t
  t=$({ time "$@" >/dev/null 2>&1; } 2>&1) || true
  awk '{printf "%.4f", $1 + $2}' <<<"$t"
}
allocs_of() { # command...: heap allocations valgrind counted (gpurig's exit status is not the point here)
  { valgrind --tool=memcheck "$@" 2>&1 >/dev/null || true; } | sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
}
per_sample() { # label, root, scenario, then watch's output options (none: text)
  local label=$1 root=$2 scenario=$3
  shift 3
  local env=(env "GPURIG_DRIVER_DIR=$PWD/build/tests/stub" "GPURIG_STUB_SCENARIO=$scenario")
  local c1 c2 a1 a2
  c1=$(cpu_of "${env[@]}" "$gpurig" watch "$@" --count $short --interval 0.1 --root "$root")
  c2=$(cpu_of "${env[@]}" "$gpurig" watch "$@" --count $long --interval 0.1 --root "$root")
  printf '%-34s CPU per sample: %.3f ms  ' "$label" "$(awk -v a="$c1" -v b="$c2" -v n=$((long - short)) 'BEGIN{print (b - a) / n * 1000}')"
  if command -v valgrind >/dev/null; then
    a1=$(allocs_of "${env[@]}" "$gpurig" watch "$@" --count $short --interval 0.1 --root "$root")
    a2=$(allocs_of "${env[@]}" "$gpurig" watch "$@" --count 51 --interval 0.1 --root "$root")
    printf 'heap allocations per sample: %s' "$(awk -v a="$a1" -v b="$a2" -v n=$((51 - short)) 'BEGIN{printf "%.2f", (b - a) / n}')"
  fi
  echo
}

if [ "$real" = --real ]; then
  command -v nvidia-smi >/dev/null || { echo "bench/sampler.sh: --real needs nvidia-smi" >&2; exit 3; }
  n=100
  c_g=$(cpu_of "$gpurig" watch --count $n --interval 0.1)
  c_s=$(cpu_of nvidia-smi --query-gpu=utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm,clocks.mem,pcie.link.gen.current,pcie.link.width.current,clocks_event_reasons.active --format=csv -lms 100 -c $n)
  echo "real driver, $n samples: gpurig watch $c_g s CPU, nvidia-smi --query-gpu $c_s s CPU, ratio $(awk -v a="$c_g" -v b="$c_s" 'BEGIN{printf "%.2f", a / b}')"
  exit 0
fi
echo "gpurig sampler cost, output to /dev/null, interval 0.1 s, $((long - short)) samples ($(nproc) CPUs, $(uname -m))"
per_sample "8 GPUs (a100-nvswitch), text" tests/data/trees/hgx-a100 a100-nvswitch
per_sample "8 GPUs (a100-nvswitch), --json" tests/data/trees/hgx-a100 a100-nvswitch --json
per_sample "4 GPUs (4gpu, epyc-riser), text" tests/data/trees/epyc-riser 4gpu
per_sample "4 GPUs (4gpu, epyc-riser), --json" tests/data/trees/epyc-riser 4gpu --json
