#!/bin/sh
# CLI golden tests: runs each case in cases.txt and compares stdout, stderr and
# the exit status with golden/NAME.out.
# usage: run_golden.sh GPURIG TREES [--update [--numbers]]
#   --update            rewrites the goldens whose output changed in its words
#                       only, and lists every changed case under its section of
#                       cases.txt (the comment line above its group); a golden
#                       whose numbers changed is not rewritten, and fails
#   --update --numbers  rewrites those too
# Review the diff before committing (docs/testing.md, "Golden files").
set -u
usage() { echo "usage: run_golden.sh GPURIG TREES [--update [--numbers]]" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 4 ] || usage
gpurig=$1
trees=$2
update=${3:-}
numbers=${4:-}
case "$update${numbers:+ $numbers}" in ''|--update|'--update --numbers') ;; *) usage ;; esac
# the cases run from tests/data or the trees: paths given relative to here are made absolute
case "$gpurig" in */*) gpurig=$(cd "$(dirname "$gpurig")" && pwd)/$(basename "$gpurig") ;; esac
trees=$(cd "$trees" && pwd) || usage
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../data"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/changes"

# numbers A B: whether files A and B hold the same numbers in the same order
# (a change in words only keeps them; a figure changed, added or dropped does not)
same_numbers() {
  grep -oE '[0-9]+([.][0-9]+)?' "$1" >"$tmp/n1" 2>/dev/null
  grep -oE '[0-9]+([.][0-9]+)?' "$2" >"$tmp/n2"
  cmp -s "$tmp/n1" "$tmp/n2"
}

check() { # name, condition text, result (0 = ok)
  if [ "$3" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: $2"; fi
}

section="(the first group, above any section comment)"
in_comment=0
while IFS= read -r line; do
  # a comment line after a case starts a section; the lines of one comment block are one section
  case "$line" in
    '# name |'*) continue ;; # the header: what the columns are
    '#'*) [ $in_comment = 1 ] || section=$(echo "$line" | sed 's/^# *//'); in_comment=1; continue ;;
    '') continue ;;
  esac
  in_comment=0
  name=${line%%|*} rest=${line#*|}
  rc=${rest%%|*} rest=${rest#*|}
  dir=${rest%%|*} args=${rest#*|}
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
  if [ "$update" = --update ] && ! cmp -s "$tmp/all" "$here/golden/$name.out"; then
    golden=$here/golden/$name.out
    if [ ! -e "$golden" ]; then
      kind="new, written"
      cp "$tmp/all" "$golden"
    elif same_numbers "$golden" "$tmp/all"; then
      kind="words, rewritten"
      cp "$tmp/all" "$golden"
    elif [ "$numbers" = --numbers ]; then
      kind="numbers, rewritten (--numbers)"
      cp "$tmp/all" "$golden"
    else
      kind="NUMBERS, NOT rewritten (--update --numbers rewrites it)"
    fi
    printf '%s\t%s\t%s\n' "$section" "$name" "$kind" >>"$tmp/changes"
  fi
  [ "$got" = "$rc" ]; check "$name" "exit $got, expected $rc" $?
  if ! cmp -s "$tmp/all" "$here/golden/$name.out"; then
    diff -u "$here/golden/$name.out" "$tmp/all" | head -40
    check "$name" "output differs from golden/$name.out" 1
  else
    check "$name" "" 0
  fi
done <"$here/cases.txt"

if [ -n "$update" ]; then
  echo "--update: $(grep -c . "$tmp/changes") case(s) changed, by section of cases.txt:"
  awk -F '\t' '$1 != last { print "  # " $1; last = $1 } { printf "    %-24s %s\n", $2, $3 }' "$tmp/changes"
fi

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
