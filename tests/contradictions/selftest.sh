#!/usr/bin/env bash
# Proves the contradiction checks can fail: real `gpurig report` outputs pass
# as they are, and each, doctored with one contradiction, is refused with the
# rule it breaks, naming the input.
# usage: selftest.sh GPURIG (run.sh runs it first; the environment as run.sh's)
set -u
[ $# -eq 1 ] || { echo "usage: selftest.sh GPURIG" >&2; exit 2; }
G=$1
here=$(cd "$(dirname "$0")" && pwd)
DATA=${GPURIG_DATA:-$here/../../data}
D=${GPURIG_TEST_DATA:-$here/../data}
. "$here/lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpurig-contra-self.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
bad=0

# report NAME ARGS...: NAME.txt and NAME.json from gpurig report.
report() {
  local name=$1
  shift
  COLUMNS=10000 "$G" report --verbose "$@" >"$tmp/$name.txt" 2>/dev/null
  "$G" report --json "$@" >"$tmp/$name.json" 2>/dev/null
}

# expect_pass NAME: the undoctored output passes every rule.
expect_pass() {
  problems=0
  local out
  out=$(check_report "$1" "$tmp/$1.txt" "$tmp/$1.json")
  if [ -n "$out" ]; then
    echo "selftest FAIL: $1 as gpurig prints it was refused:"
    echo "$out"
    bad=1
  fi
}

# expect_fail NAME RULE SED [JSON_SED]: doctored with SED (on the text; with
# JSON_SED on the JSON too), the output must be refused for RULE, naming NAME.
expect_fail() {
  local name=$1 rule=$2 out
  sed -e "$3" "$tmp/$name.txt" >"$tmp/doctored.txt"
  sed -e "${4:-}" "$tmp/$name.json" >"$tmp/doctored.json"
  if cmp -s "$tmp/$name.txt" "$tmp/doctored.txt" && cmp -s "$tmp/$name.json" "$tmp/doctored.json"; then
    echo "selftest FAIL: doctoring $name for \"$rule\" changed nothing (the output changed: update the selftest)"
    bad=1
    return
  fi
  problems=0
  out=$(check_report "$name" "$tmp/doctored.txt" "$tmp/doctored.json")
  if ! printf '%s\n' "$out" | grep -qF "FAIL $name: $rule"; then
    echo "selftest FAIL: $name doctored for \"$rule\" was not refused for it; got:"
    printf '%s\n' "${out:-(nothing)}" | sed 's/^/  /'
    bad=1
  fi
}

report wopr --rig "$DATA/rigs/wopr.rig"                          # one socket, no P2P at all
report t181 --rig "$DATA/rigs/gigabyte-t181-g20.rig"             # two sockets, NVLink between all GPUs
report trt2 --rig "$DATA/rigs/sys-4029gp-trt2.rig"               # Intel, hives joined through a root complex
report bug1 --rig "$D/repro/bug1-intel-intersocket.rig"          # a declared inter-socket link
for n in wopr t181 trt2 bug1; do
  expect_pass "$n"
done

expect_fail wopr "a link named Gen0 or x0" 's/Gen4 x16/Gen0 x0/'
expect_fail wopr "a socket crossed" 's/\(GPUs can exchange\|no GPU pair can do P2P\)/& without crossing a socket/'
expect_fail t181 "GPU traffic said to cross the socket link" \
  's/but NVLink joins every pair: .*/traffic between GPUs of different nodes crosses the link between them./'
expect_fail wopr "\"some\" hops staged" 's/every hop staged/some hops staged/'
expect_fail wopr "host-staged ring hops" 's/7 of 7 ring hops go through host memory/6 of 7 ring hops go through host memory/'
expect_fail wopr "NCCL_P2P_LEVEL advice where no GPU pair can do P2P" \
  's/whatever NCCL_P2P_LEVEL says/unless NCCL_P2P_LEVEL=PHB is set/'
expect_fail wopr "P2P promised where no GPU pair can do P2P" 's/every hop staged through host memory/peer-to-peer over PCIe/'
expect_fail trt2 "headline all-reduce figure differs from the training verdict's" \
  's/training across 10 GPUs: Predicted all-reduce bus bandwidth 10\.6/training across 10 GPUs: Predicted all-reduce bus bandwidth 12.6/'
expect_fail trt2 "the raised NCCL_P2P_LEVEL figure differs" 's/^  With NCCL_P2P_LEVEL=PHB: 12\.6/  With NCCL_P2P_LEVEL=PHB: 13.6/'
expect_fail bug1 "more than one inter-socket figure" 's/NCCL counts 10 GB/NCCL counts 12 GB/'
expect_fail bug1 "more than one inter-socket figure" 's/^$//' 's/"inter_socket_nccl_bw_gbps": 10.0/"inter_socket_nccl_bw_gbps": 12.0/'
expect_fail trt2 "P2P groups against hives" 's/join into 1 P2P group,/join into 3 P2P groups,/'
expect_fail trt2 "hive count" 's/^Peer-to-peer: 2 P2P hives/Peer-to-peer: 3 P2P hives/'
expect_fail trt2 "largest P2P group" 's/10 of 10 GPUs can exchange/9 of 10 GPUs can exchange/'

[ $bad -eq 0 ] && echo "contradictions selftest: every rule refuses its doctored output"
exit $bad
