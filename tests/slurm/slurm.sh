#!/bin/bash
# The Slurm scripts of contrib/slurm (docs/cluster.md) on fixture trees, with a stand-in
# scontrol that records what it is asked (no Slurm here): the health check (doctor --nhc) drains
# a failing node and leaves each node's report; the prolog refuses a node whose fleet comparison
# has a failure naming it and lets a warning or an uncomparable node through; the burn job
# drains a node whose burn fails (stand-in driver libraries). Each run bounded by timeout.
# usage: slurm.sh GPURIG   (env: GPURIG_DATA, GPURIG_TEST_STUB)
set -u
BIN=${1:?usage: slurm.sh GPURIG}
here=$(cd "$(dirname "$0")" && pwd)
contrib=$here/../../contrib/slurm
trees=$here/../data/trees
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for t in jq timeout; do command -v $t >/dev/null || { echo "FAIL: $t not found"; exit 1; }; done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
printf '#!/bin/sh\necho "$*" >>"%s/scontrol.log"\n' "$W" >"$W/scontrol"
chmod 755 "$W/scontrol"
export GPURIG=$BIN SCONTROL=$W/scontrol GPURIG_PROLOG_SYSLOG=0
drains() { cat "$W/scontrol.log" 2>/dev/null; }

# run SCRIPT NODE DOCTOR-ARGS [ARGS...]: stdout+stderr in $out, exit status in $rc
run() {
  local script=$1 node=$2 dargs=$3
  shift 3
  out=$(SLURMD_NODENAME=$node GPURIG_DOCTOR_ARGS=$dargs timeout -k 5 120 "$contrib/$script" "$@" 2>&1)
  rc=$?
}

# 1. health check: healthy nodes are silent and leave their reports; a failing one is drained
mkdir "$W/reports"
export GPURIG_REPORTS=$W/reports
for n in node01 node02; do
  run gpurig-nhc $n "--root $trees/doctor-healthy"
  [ $rc = 0 ] && [ -z "$out" ] || fail "nhc $n healthy: exit $rc, output '$out'"
  jq -e '.inventory.gpus | length == 4' "$W/reports/$n.json" >/dev/null || fail "nhc $n: no report of 4 GPUs in reports/$n.json"
done
[ -z "$(drains)" ] || fail "nhc drained a healthy node: $(drains)"
run gpurig-nhc node03 "--root $trees/doctor-healthy --expect-gpus 5"
[ $rc = 1 ] || fail "nhc node03 missing a GPU: exit $rc, want 1 ($out)"
want="update nodename=node03 state=drain reason=ERROR: gpurig: gpu.count: 4 of the 5 expected GPUs are on the PCI bus: 1 missing."
[ "$(drains)" = "$want" ] || fail "nhc node03: scontrol got '$(drains)', want '$want'"
[ -f "$W/reports/node03.json" ] || fail "nhc node03: no report left"
tmp=$(find "$W/reports" -name '.*.json.*')
[ -z "$tmp" ] || fail "nhc left a temporary file: $tmp"
rm -f "$W/scontrol.log" "$W/reports/node03.json"

# 2. prolog, against node01 and node02's reports
# a GPU off the bus: the tree without 0000:42:00.0 on the PCI bus
cp -a "$trees/doctor-healthy" "$W/gpu-lost"
rm "$W/gpu-lost/sys/bus/pci/devices/0000:42:00.0"
run gpurig-prolog node09 "--root $trees/doctor-healthy"
[ $rc = 0 ] || fail "prolog, a node like the others: exit $rc ($out)"
run gpurig-prolog node09 "--root $trees/doctor-riser-x8"
[ $rc = 0 ] || fail "prolog, a node with a link at x8 (a warning): exit $rc, want 0 ($out)"
run gpurig-prolog node09 "--root $W/gpu-lost"
[ $rc = 1 ] || fail "prolog, a GPU off the bus: exit $rc, want 1 ($out)"
grep -qF "gpurig-prolog: node09: refused: node09: no GPU at 0000:42:00.0, where 2 of the 2 others have GPU3" <<<"$out" ||
  fail "prolog, a GPU off the bus: no reason naming it: '$out'"
run gpurig-prolog node09 "--root $trees/doctor-healthy --expect-gpus 5"
[ $rc = 1 ] || fail "prolog, a doctor failure only this node has: exit $rc, want 1 ($out)"
# this node's own older report is left out: node01's healthy one would otherwise be a third vote
cp "$W/reports/node02.json" "$W/reports/node03.json"
run gpurig-prolog node01 "--root $W/gpu-lost"
[ $rc = 1 ] || fail "prolog node01 against its own older report: exit $rc, want 1 ($out)"
grep -qF "no GPU at 0000:42:00.0, where 2 of the 2 others" <<<"$out" || fail "prolog node01: compared with itself? '$out'"
rm "$W/reports/node03.json"
# what cannot be compared lets the job start, and says why
mkdir "$W/one"
cp "$W/reports/node01.json" "$W/one/"
out=$(GPURIG_REPORTS=$W/one SLURMD_NODENAME=node09 GPURIG_DOCTOR_ARGS="--root $W/gpu-lost" timeout 120 "$contrib/gpurig-prolog" 2>&1)
rc=$?
[ $rc = 0 ] || fail "prolog, one other report: exit $rc, want 0"
grep -q "1 other node report(s) in $W/one, 2 needed for a majority: not compared" <<<"$out" || fail "prolog, one other report: '$out'"
run gpurig-prolog node09 "--root $W/no-such-tree"
[ $rc = 0 ] || fail "prolog, doctor cannot read the machine: exit $rc, want 0 ($out)"
grep -q "gpurig doctor gave no report (exit [0-9]*): not compared" <<<"$out" || fail "prolog, no report: '$out'"
[ -z "$(drains)" ] || fail "the prolog called scontrol: $(drains)"

# 3. burn as a maintenance job, on the stand-in driver
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB GPURIG_BURN_DIR=$W
burn=(--duration 2 --size 1M --interval 0.5 --root "$trees/epyc-riser")
out=$(GPURIG_STUB_SCENARIO=healthy SLURMD_NODENAME=node01 timeout -k 5 120 "$contrib/gpurig-burn.sbatch" "${burn[@]}" 2>&1)
rc=$?
[ $rc = 0 ] || fail "burn, healthy: exit $rc ($out)"
jq -e '[.verdicts[] | select(.severity == "fail")] | length == 0' "$W/burn-node01.json" >/dev/null || fail "burn, healthy: no clean report"
[ -z "$(drains)" ] || fail "burn drained a healthy node: $(drains)"
out=$(GPURIG_STUB_SCENARIO=burn-xid79 SLURMD_NODENAME=node02 timeout -k 5 120 "$contrib/gpurig-burn.sbatch" "${burn[@]}" 2>&1)
rc=$?
[ $rc = 2 ] || fail "burn, a GPU lost: exit $rc, want 2 ($out)"
grep -q "^update nodename=node02 state=drain reason=gpurig burn: GPU2 0000:41:00.0 fell off the bus" <<<"$(drains)" ||
  fail "burn, a GPU lost: scontrol got '$(drains)'"

if [ $fails -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok: health check, prolog and burn job"
