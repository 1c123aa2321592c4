#!/usr/bin/env bash
# Every diagram gpurig draws of its bundled inputs is well-formed XML: the
# bundled example, every rig in data/rigs, the captures in tests/data and a
# gathered tree, and a rig whose names carry markup, quotes, control
# characters and bytes that are not UTF-8. xmllint (libxml2-utils, installed
# by setup.sh) judges; without it the test is skipped (exit 77). Where
# Graphviz is installed, dot also reads each --dot output without an error.
# usage: xmllint.sh GPURIG TREES   (env: GPURIG_DATA, GPURIG_TEST_DATA)
set -u
gpurig=$1
trees=$2
command -v xmllint >/dev/null || { echo "xmllint: not installed, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0
check() { # name, gpurig topo arguments...
  local name=$1
  shift
  n=$((n + 1))
  if ! "$gpurig" topo "$@" --svg "$tmp/$name.svg" >/dev/null 2>"$tmp/$name.err"; then
    [ -s "$tmp/$name.svg" ] || { echo "FAIL: $name: no SVG: $(cat "$tmp/$name.err")"; fails=$((fails + 1)); return; }
  fi
  if ! xmllint --noout "$tmp/$name.svg" 2>"$tmp/$name.lint"; then
    echo "FAIL: $name: $(head -3 "$tmp/$name.lint")"
    fails=$((fails + 1))
  fi
  if command -v dot >/dev/null; then
    "$gpurig" topo "$@" --dot "$tmp/$name.dot" >/dev/null 2>&1
    dot -Tsvg "$tmp/$name.dot" -o "$tmp/$name.dot.svg" 2>"$tmp/$name.doterr" ||
      { echo "FAIL: $name: dot refuses the DOT: $(head -3 "$tmp/$name.doterr")"; fails=$((fails + 1)); }
  fi
  # the root element and no scripts or external references (diagram.h)
  local svg
  svg=$(cat "$tmp/$name.svg")
  case $svg in
    '<svg xmlns="http://www.w3.org/2000/svg" class="gr-diagram"'*) ;;
    *) echo "FAIL: $name: root element is not <svg class=\"gr-diagram\">"; fails=$((fails + 1)) ;;
  esac
  case $svg in
    *'<script'*|*'href='*|*'url('*) echo "FAIL: $name: a script or an external reference"; fails=$((fails + 1)) ;;
  esac
}
check example --input "$GPURIG_DATA/examples/nvidiaDGX2.xml"
for f in "$GPURIG_TEST_DATA"/hwloc/*.xml "$GPURIG_TEST_DATA"/hwloc-aws/*.xml; do
  check "$(basename "$f" .xml)" --input "$f"
done
for f in "$GPURIG_DATA"/rigs/*.rig; do
  check "rig-$(basename "$f" .rig)" --rig "$f"
done
check tree-sys4029 --root "$trees/32intel64-2p8co2t+8ve"
printf 'rig "A <b>&amp; \x27q\x27 \xff\xfe \xc3\x28 \x01 ]]> -->"\ncpu cpu0 "EPYC <7763> & \xe9" vendor amd\nrootcomplex rc0 cpu0 gen4\nswitch sw0 rc0 model "PEX<&>\xff" lanes 96 gen4 uplink gen4 x16\ngpu 2 "RTX 4090" sw0\nnic ib0 "Connect<X> & \xff" sw0 gen4 x16\n' >"$tmp/hostile.rig"
check hostile --rig "$tmp/hostile.rig"
grep -q '&lt;b&gt;&amp;amp;' "$tmp/hostile.svg" || { echo "FAIL: hostile: the rig's name is not escaped"; fails=$((fails + 1)); }
[ $fails = 0 ] && echo "xmllint: $n diagrams well-formed$(command -v dot >/dev/null && echo ", dot reads each DOT")"
exit $((fails > 0))
