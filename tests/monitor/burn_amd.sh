#!/usr/bin/env bash
# gpurig burn on AMD GPUs through the stand-in HIP runtime, rocBLAS, RCCL
# and ROCm SMI (tests/stub): tinybox-red (6 x RX 7900 XTX) and mi50-bridge
# (4 x MI50 on an Infinity Fabric bridge) pass with figures for every GPU
# (GEMM at the stand-in's rate less its 5 us a call, host and peer copies,
# the all-reduce with no stall, the sampler seeing each GPU loaded); GPU2
# falling off the bus (tinybox-red-vanish) is a fail naming it, exit 2, and so are its PCIe
# replays rising under load (tinybox-red-replay);
# without rocBLAS burn says the products were not run and loads the copies; on a machine with
# both vendors one is burned, the other named.
# usage: burn_amd.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB
unset GPURIG_STUB_SCENARIO GPURIG_STUB_SCENARIO_FILE
fails=0
fail() { echo "burn_amd.sh: FAIL: $*" >&2; fails=$((fails + 1)); }
# 6 s: every load must have finished a round, and on a loaded 2-core machine under ASan a round
# of 6 GPUs took over 3 s (load average 15)
run() { # want-exit, scenario, tree, args...
  local want=$1 sc=$2 tree=$3 rc=0
  shift 3
  GPURIG_STUB_SCENARIO=$sc "$gpurig" burn --duration 6 --size 1M --interval 0.25 \
    --root "$GPURIG_TEST_DATA/trees/$tree" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" = "$want" ] || fail "$sc $*: exit $rc, expected $want: $(head -c 300 "$work/err")"
}

# name, GPUs, the stand-in's GEMM TFLOPS (stub_amd.h), its peer copy rate floor
for case in "tinybox-red 6 80 20" "mi50-bridge 4 21 18"; do
  set -- $case
  sc=$1 n=$2 tf=$3 p2p=$4
  run 0 "$sc" "$sc" --json
  jq -e --argjson n "$n" --argjson tf "$tf" --argjson p2p "$p2p" '
      .exit == 0 and (.verdicts | all(.severity == "ok")) and (.gpus | length == $n)
      and (.gpus | all(.host_gbps > 20 and .p2p_gbps > $p2p and .corrupt_copies == 0 and .lost == false))
      and (.gpus | all(.gemm_tflops > 0.9 * $tf and .gemm_tflops <= $tf and .gemm_wrong == 0)) and .gemm_n >= 64
      and (.gpus | all(.power_max_w > 250))
      and .allreduce.iterations >= 1 and (.allreduce.stalls | length == 0)' "$work/out" >/dev/null ||
    fail "$sc: $(head -c 600 "$work/out")"
  echo "$sc: exit 0, $(jq '.gpus | length' "$work/out") GPUs, GEMM $(jq '.gpus[0].gemm_tflops' "$work/out") TFLOPS," \
       "host $(jq '.gpus[0].host_gbps' "$work/out") GB/s, p2p $(jq '.gpus[0].p2p_gbps' "$work/out") GB/s," \
       "all-reduce $(jq '.allreduce.iterations' "$work/out") iterations"
done

run 2 tinybox-red-vanish tinybox-red
grep -qE '^  fail  GPU2 0000:43:00.0 fell off the bus at \+[0-9.]+ s under load' "$work/out" ||
  fail "tinybox-red-vanish: no lost-GPU verdict: $(grep -E '^  (fail|warn)' "$work/out" | head -3)"
grep -qE '^  pass  GPU[0135] ' "$work/out" || fail "tinybox-red-vanish: the other GPUs have no verdict"
echo "tinybox-red-vanish: exit 2, $(grep -m1 '^  fail' "$work/out" | cut -c1-80)..."

# GPU2's link retrying under load (ROCm SMI's PCIe replay counter rising): a fail naming it, exit 2
run 2 tinybox-red-replay tinybox-red
grep -qE '^  fail  GPU2 0000:43:00.0: [0-9]+ PCIe replays in [0-9]+ s under load' "$work/out" ||
  fail "tinybox-red-replay: no replay verdict: $(grep -E '^  (fail|warn)' "$work/out" | head -3)"
echo "tinybox-red-replay: exit 2, $(grep -m1 '^  fail' "$work/out" | cut -c1-80)..."

# both vendors (mixed: 2 RTX 3090s, 2 RX 7900 XTX): one vendor a run, NVIDIA's unless
# CUDA_VISIBLE_DEVICES is empty; the other's GPUs are named on stderr; the all-reduce runs over
# every GPU of the runtime (the sampler sees all four)
for hide in no yes; do
  want=0000:21:00.0 rc=0
  [ "$hide" = yes ] && want=0000:0a:00.0
  env $([ "$hide" = yes ] && echo CUDA_VISIBLE_DEVICES=) GPURIG_STUB_SCENARIO=mixed "$gpurig" burn --duration 6 \
    --size 1M --json --root "$GPURIG_TEST_DATA/trees/mixed" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" = 0 ] || fail "mixed, CUDA hidden: $hide: exit $rc: $(head -c 300 "$work/err")"
  jq -e --arg want "$want" '[.gpus[] | select(.gemm_tflops != null)] | length == 2 and .[0].bus_id == $want' \
    "$work/out" >/dev/null && jq -e '.allreduce.iterations >= 1' "$work/out" >/dev/null ||
    fail "mixed, CUDA hidden: $hide: $(jq -c '[.gpus[] | {bus_id, gemm_tflops}], .allreduce' "$work/out")"
  if [ "$hide" = no ]; then
    grep -q '^gpurig: 2 nvidia GPUs measured, not the 2 amd GPUs also here .*CUDA_VISIBLE_DEVICES= (empty)' \
      "$work/err" || fail "mixed: the AMD GPUs left out are not named: $(cat "$work/err")"
  fi
  echo "mixed, CUDA hidden: $hide: exit 0, burned from $want, all-reduce $(jq '.allreduce.iterations' "$work/out") iterations"
done

# without rocBLAS: a stand-in directory holding everything but it
mkdir "$work/norocblas"
for f in "$GPURIG_TEST_STUB"/lib*.so.*; do
  case "$f" in */librocblas.so.*) ;; *) ln -s "$f" "$work/norocblas/" ;; esac
done
GPURIG_DRIVER_DIR=$work/norocblas GPURIG_STUB_SCENARIO=tinybox-red "$gpurig" burn --duration 2 --size 1M \
  --root "$GPURIG_TEST_DATA/trees/tinybox-red" >"$work/out" 2>"$work/err" && rc=0 || rc=$?
[ "$rc" = 1 ] || fail "no rocBLAS: exit $rc, expected 1"
grep -qE '^  warn  no matrix-product load: no rocBLAS \(.*\): the GPUs.* compute was not tested \(install rocBLAS' \
  "$work/out" || fail "no rocBLAS: not said: $(grep -E '^  (fail|warn)' "$work/out" | head -3)"
echo "no rocBLAS: exit 1, $(grep -m1 '^  warn' "$work/out" | cut -c1-100)..."

[ "$fails" = 0 ] || exit 1
echo "burn_amd.sh: all passed"
