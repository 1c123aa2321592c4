#!/usr/bin/env bash
# Wall time of `gpurig topo --input nvidiaDGX2.xml` against the anchor tool,
# `lstopo-no-graphics --input nvidiaDGX2.xml`, on the same machine in the same run.
# Runs alternate (A B A B ...) so drift hits both; prints per-run medians and the ratio.
# usage: bench/topo_vs_lstopo.sh [GPURIG] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
gpurig=${1:-build/gpurig}
runs=${2:-200}
xml=tests/data/hwloc/nvidiaDGX2.xml
export GPURIG_DATA=$PWD/data
command -v lstopo-no-graphics >/dev/null || { echo "needs lstopo-no-graphics (apt-get install hwloc-nox)" >&2; exit 3; }
[ -x "$gpurig" ] || { echo "build gpurig first (./setup.sh run)" >&2; exit 3; }

# Both commands must succeed before they are timed.
"$gpurig" topo --input "$xml" >/dev/null
lstopo-no-graphics --input "$xml" >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < runs; i++)); do
  s=$(date +%s%N); "$gpurig" topo --input "$xml" >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000)) >>"$tmp/gpurig"
  s=$(date +%s%N); lstopo-no-graphics --input "$xml" >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000)) >>"$tmp/lstopo"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
g=$(median "$tmp/gpurig")
l=$(median "$tmp/lstopo")
echo "machine: $(nproc) cores, $(uname -r); lstopo $(lstopo-no-graphics --version | awk '{print $2}'); $runs runs each, alternating"
echo "gpurig topo --input nvidiaDGX2.xml:        median ${g} us"
echo "lstopo-no-graphics --input nvidiaDGX2.xml: median ${l} us"
awk -v g="$g" -v l="$l" 'BEGIN {printf "ratio gpurig/lstopo: %.2f (below 1.00 = gpurig faster)\n", g / l}'
