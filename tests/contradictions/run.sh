#!/usr/bin/env bash
# The contradiction test: `gpurig report` (text and --json) on every input
# gpurig ships or tests with must not say two things that disagree (lib.sh
# lists the rules: no "Gen0 x0", no socket crossed on one socket, no socket
# note for GPUs all joined by NVLink, host-staged hops counted as the JSON
# counts them, no NCCL_P2P_LEVEL advice where no pair can do P2P, one
# all-reduce figure, one inter-socket figure, hives and P2P groups that
# agree). It runs selftest.sh first, which proves each rule can fail.
#
# Inputs: data/rigs/*.rig, tests/data/repro/*.rig and *.xml, the hwloc XMLs
# under tests/data/hwloc/ and tests/data/hwloc-aws/, the unpacked trees
# ($GPURIG_TEST_TREES) and the fixture trees under tests/data/trees/ (--root),
# the NCCL topology files under tests/data/nccl-topo/ (--input) and the rigs
# of published machines (tests/data/published/). Every input must load,
# except the ones named in refused.txt (a reproducer of a refusal, a partial
# gather), each with its reason: a refusal anywhere else is a failure, and a
# listed input that loads is one too (the list must stay true).
#
# usage: run.sh GPURIG
# Environment: GPURIG_DATA, GPURIG_TEST_DATA, GPURIG_TEST_TREES, GPURIG_PCI_IDS.
set -u
[ $# -eq 1 ] || { echo "usage: run.sh GPURIG" >&2; exit 2; }
G=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
DATA=${GPURIG_DATA:-$here/../../data}
D=${GPURIG_TEST_DATA:-$here/../data}
TREES=${GPURIG_TEST_TREES:-}
. "$here/lib.sh"

bash "$here/selftest.sh" "$G" || { echo "contradictions: the selftest failed: the checks cannot be trusted"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gpurig-contra.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
problems=0 checked=0 skipped=0

# The inputs gpurig is meant to refuse: "NAME reason" lines.
refused() {
  grep -v '^#' "$here/refused.txt" | grep -q "^$1 "
}

# one NAME ARGS...: report and report --json on one input.
one() {
  local name=$1 rc rcj
  shift
  COLUMNS=10000 timeout 60 "$G" report --verbose "$@" >"$work/text" 2>"$work/err"
  rc=$?
  timeout 60 "$G" report --json "$@" >"$work/json" 2>/dev/null
  rcj=$?
  # exit 2 with a report on stdout is a machine with a failing finding (a rig's power budget over
  # its circuit, say): it loaded and is checked; refused is exit 2 or more with nothing printed
  if [ $rc -gt 2 ] || [ $rcj -gt 2 ] || ! [ -s "$work/text" ] || ! [ -s "$work/json" ]; then
    if refused "$name"; then
      echo "refused as listed: $name: exit $rc: $(head -n 1 "$work/err" | cut -c1-160)"
      skipped=$((skipped + 1))
    else
      fail "$name" "does not load" "exit $rc (text), $rcj (JSON)" "$(head -n 1 "$work/err")"
    fi
    return
  fi
  if refused "$name"; then
    fail "$name" "loads but refused.txt says gpurig refuses it" "exit $rc" "(remove it from the list)"
    return
  fi
  checked=$((checked + 1))
  check_report "$name" "$work/text" "$work/json"
}

for f in "$DATA"/rigs/*.rig; do
  one "rigs/$(basename "$f")" --rig "$f"
done
for f in "$D"/repro/*.rig "$D"/rigs/*.rig "$D"/published/*.rig; do
  [ -e "$f" ] && one "${f#"$D"/}" --rig "$f"
done
for f in "$D"/repro/*.xml "$D"/hwloc/*.xml "$D"/hwloc-aws/*.xml "$D"/nccl-topo/*.xml; do
  [ -e "$f" ] && one "${f#"$D"/}" --input "$f"
done
for dir in "$D"/trees/*/; do
  [ -d "$dir" ] && one "trees/$(basename "$dir")" --root "${dir%/}"
done
for dir in ${TREES:+"$TREES"/*/}; do
  [ -d "$dir" ] && one "unpacked/$(basename "$dir")" --root "${dir%/}"
done

echo "contradictions: $checked inputs checked, $skipped refused as listed, $problems contradiction(s)"
[ "$problems" -eq 0 ] && [ "$checked" -gt 0 ]
