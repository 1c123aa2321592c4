#!/bin/sh
# CLI golden tests: runs each case in cases.txt and compares stdout, stderr and
# the exit status with golden/NAME.out. `run_golden.sh GPURIG TREES --update`
# rewrites the golden files (review the diff before committing).
set -u
gpurig=$1
trees=$2
update=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../data"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name, condition text, result (0 = ok)
  if [ "$3" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: $2"; fi
}

while IFS='|' read -r name rc dir args; do
  name=$(echo "$name" | tr -d ' ')
  case "$name" in ''|'#'*) continue ;; esac
  rc=$(echo "$rc" | tr -d ' ')
  dir=$(echo "$dir" | tr -d ' ')
  args=$(echo "$args" | sed 's/^ *//; s/ *$//')
  [ "$dir" = trees ] && wd=$trees || wd=$data
  # leading VAR=value words set the environment of that one run
  envs=$(echo "$args" | grep -oE '^([A-Z_]+=[^ ]* +)+' || true)
  rest=${args#"$envs"}
  # eval: arguments may be quoted ("V100 PCIe 32GB")
  # no real driver unless the case names one: goldens must not depend on the machine
  (cd "$wd" && eval "GPURIG_DRIVER_DIR=/nonexistent/gpurig-tests $envs \"\$gpurig\" $rest" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc")
  # timings differ from run to run; everything else must not
  sed -i -E 's/^[0-9]{2}:[0-9]{2}:[0-9]{2}  /HH:MM:SS  /; s/"time_s":[0-9.]+/"time_s":N/; s/measured in [0-9.]+ s/measured in N s/; s/"wall_s": [0-9.e+-]+/"wall_s": N/; s#'"$GPURIG_TEST_STUB"'#STUB#g' \
      "$tmp/out" "$tmp/err"
  # the all-reduce's host-clock figures are real time (the stand-in's GPU clocks are virtual): they vary
  sed -i -E '/^All-reduce, /,/^$/s/ +[0-9]+\.[0-9] +[0-9]+\.[0-9]$/  (varies)  (varies)/; s/"host_time_us": [0-9.e+-]+/"host_time_us": N/' \
      "$tmp/out"
  got=$(cat "$tmp/rc")
  { echo "\$ gpurig $args" | sed "s#$GPURIG_TEST_STUB#STUB#g"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; echo "--- exit $got"; } >"$tmp/all"
  if [ "$update" = --update ]; then
    cp "$tmp/all" "$here/golden/$name.out"
  fi
  [ "$got" = "$rc" ]; check "$name" "exit $got, expected $rc" $?
  if ! cmp -s "$tmp/all" "$here/golden/$name.out"; then
    diff -u "$here/golden/$name.out" "$tmp/all" | head -40
    check "$name" "output differs from golden/$name.out" 1
  else
    check "$name" "" 0
  fi
done <"$here/cases.txt"

# Output that could not be written is an error, not a success.
(cd "$data" && "$gpurig" topo --input hwloc/nvidiaDGX2.xml >/dev/full 2>"$tmp/err"; echo $? >"$tmp/rc")
[ "$(cat "$tmp/rc")" = 3 ] && grep -q 'write error on standard output' "$tmp/err"; check stdout_full "exit 3 and a message" $?

# The live machine: either its own GPUs, or the plainly labelled example.
"$gpurig" >"$tmp/out" 2>"$tmp/err"; got=$?
[ "$got" -le 1 ]; check live_report "exit $got" $?
if grep -q 'No GPU found on this machine' "$tmp/out"; then
  grep -q 'EXAMPLE, NOT THIS MACHINE' "$tmp/out"; check live_report_example "example labelled" $?
fi
"$gpurig" report --json >"$tmp/out" 2>"$tmp/err"; got=$?
[ "$got" -le 1 ] && grep -q '"machine_report"' "$tmp/out"; check live_report_json "exit $got" $?

# A snapshot of a fixture tree loads back in gpurig (and is valid hwloc XML).
(cd "$data" && "$gpurig" snapshot --root trees/epyc-riser "$tmp/snap.xml" 2>/dev/null); got=$?
[ "$got" = 0 ] && "$gpurig" topo --input "$tmp/snap.xml" 2>/dev/null | grep -q 'GPU1  0000:02:00.0 .*\[10de:2204\]  Gen4 x8/x16'
check snapshot_reload "exit $got" $?
# The driver's NVLink goes into a snapshot: replayed with no driver, the T181-G20's hybrid cube
# mesh is NV2 between every pair and the HGX A100's fabric comes from the driver, not inferred.
(cd "$data" && GPURIG_DRIVER_DIR="$GPURIG_TEST_STUB" GPURIG_STUB_SCENARIO=v100-hcm \
   "$gpurig" snapshot --root trees/t181-v100 "$tmp/snap-nv.xml" 2>/dev/null); got=$?
[ "$got" = 0 ] && GPURIG_DRIVER_DIR=/nonexistent "$gpurig" topo --input "$tmp/snap-nv.xml" 2>/dev/null |
  grep -qx "GPU3$(printf '\t')NV2$(printf '\t')NV2$(printf '\t')NV2$(printf '\t') X .*"
check snapshot_nvlink_mesh "exit $got" $?
(cd "$data" && GPURIG_DRIVER_DIR="$GPURIG_TEST_STUB" GPURIG_STUB_SCENARIO=a100-nvswitch \
   "$gpurig" snapshot --root trees/hgx-a100 "$tmp/snap-sw.xml" 2>/dev/null); got=$?
[ "$got" = 0 ] && GPURIG_DRIVER_DIR=/nonexistent "$gpurig" topo --input "$tmp/snap-sw.xml" 2>/dev/null |
  grep -q '^NVSwitch fabric (from the driver, 6 NVSwitches): GPU0-7, 12 NVLink3 links each'
check snapshot_nvlink_fabric "exit $got" $?
if command -v lstopo-no-graphics >/dev/null 2>&1; then
  lstopo-no-graphics --input "$tmp/snap.xml" -v 2>/dev/null | grep -q 'GPURigLinkCurWidth=8'
  check snapshot_lstopo "lstopo reads gpurig's attributes" $?
fi
# A failed snapshot leaves no file behind.
(cd "$data" && "$gpurig" snapshot --root nccl-topo "$tmp/bad.xml" 2>/dev/null); got=$?
[ "$got" = 2 ] && [ ! -e "$tmp/bad.xml" ] && [ -z "$(ls "$tmp" | grep bad)" ]; check snapshot_bad_root "exit $got" $?

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
