#!/usr/bin/env bash
# One screen: `gpurig` and `gpurig report` fit in 40 lines of 100 columns on
# every bundled example (and on this machine), and colour appears only on a
# terminal, never with NO_COLOR set.
# usage: screen.sh GPURIG   (environment: GPURIG_DATA, GPURIG_TEST_DATA, GPURIG_TEST_TREES)
set -u
G=$1
D=$GPURIG_TEST_DATA
pass=0 fail=0
check() { # name, ok (0/1), detail
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: $3"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fits NAME ARGS...: the text report of ARGS in at most 40 lines of 100 columns
fits() {
  local name=$1
  shift
  (cd "$D" && env -u COLUMNS timeout 60 "$G" "$@" >"$tmp/out" 2>"$tmp/err")
  local rc=$? lines cols
  lines=$(wc -l <"$tmp/out")
  cols=$(LC_ALL=C.UTF-8 wc -L <"$tmp/out") # characters (the wiring's box-drawing ones are 3 bytes)
  echo "$name: $lines lines, widest $cols columns (exit $rc)"
  [ "$rc" -le 1 ] && [ "$lines" -le 40 ] && [ "$cols" -le 100 ]
  check "$name" $? "$lines lines, $cols columns, exit $rc: $(head -c 300 "$tmp/err")"
}

fits this-machine                   # bare gpurig: this machine, or it and the labelled example
fits dgx2 report --input hwloc/nvidiaDGX2.xml
fits p5en report --input hwloc-aws/p5en.xml
fits p4d report --input hwloc-aws/p4d.xml
fits p6-b200 report --input hwloc-aws/p6-b200.xml
fits sys4029-tree report --root "$GPURIG_TEST_TREES/32intel64-2p8co2t+8ve"
fits epyc-riser report --root trees/epyc-riser
for rig in "$GPURIG_DATA"/rigs/*.rig; do
  fits "rig $(basename "$rig" .rig)" report --rig "$(basename "$rig" .rig)"
done

# Colour: only on a terminal (script(1) gives the command a pseudo-terminal)
# and never with NO_COLOR set; a pipe gets none.
esc=$'\033['
if command -v script >/dev/null; then
  (cd "$D" && TERM=xterm timeout 60 script -qec "$G report --rig sys-4029gp-trt2" /dev/null >"$tmp/tty" 2>&1)
  grep -qF "$esc" "$tmp/tty"; check colour-on-terminal $? "no escape sequence on a terminal"
  (cd "$D" && TERM=xterm NO_COLOR=1 timeout 60 script -qec "$G report --rig sys-4029gp-trt2" /dev/null >"$tmp/tty" 2>&1)
  ! grep -qF "$esc" "$tmp/tty"; check no-colour-with-NO_COLOR $? "NO_COLOR=1 still coloured"
else
  check colour-on-terminal 1 "script(1) (bsdutils) is missing"
fi
(cd "$D" && TERM=xterm timeout 60 "$G" report --rig sys-4029gp-trt2 >"$tmp/pipe" 2>&1)
! grep -qF "$esc" "$tmp/pipe"; check no-colour-in-a-pipe $? "escape sequences in a pipe"

echo "screen: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
