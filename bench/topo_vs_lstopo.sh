#!/usr/bin/env bash
# gpurig topo --input X against the anchor, lstopo-no-graphics --whole-io --input X, on four
# hwloc XML files in one interleaved run (docs/bench.md).
#
# Method (reviews/perf.md §1): whole-process timers, the two commands run as a pair, the order
# alternating each round (A B, then B A), every input in every round, so drift hits both.
#   wall:  bash's EPOCHREALTIME around each run (fork + exec + run, us); per input the median of
#          each tool and the median of the per-pair ratios gpurig/lstopo.
#   cpu:   user+sys of the child from bash's `times` before and after each run. `times` counts in
#          ms, too coarse for a per-pair ratio of ~10 ms runs, so the ratio is total gpurig CPU
#          over total lstopo CPU for that input (the ms truncations cancel in the sums).
#   RSS:   peak resident set, /usr/bin/time -f %M, median of 5 separate runs each (alternating),
#          outside the timed rounds.
#   instructions: valgrind --tool=callgrind, one run of each tool per input (whole process, the
#          dynamic loader included): the figure that does not move with the machine's load.
#          Left out (shown as -) when valgrind is missing or GPURIG_BENCH_IR=0.
# It is a script, not a test: nothing here is asserted in the suite.
#
# usage: bench/topo_vs_lstopo.sh [GPURIG] [RUNS]
#   GPURIG  the binary (default build/gpurig); RUNS  rounds (default 300: about 30 s on a
#   2-core VM where a pair takes 20 ms, about 2 min where it takes 80 ms)
# exit: 0 measured, 2 a command failed, 3 a needed tool is missing
set -uo pipefail
export LC_ALL=C # EPOCHREALTIME's decimal point, sort
cd "$(dirname "$0")/.." || exit 3
gpurig=${1:-build/gpurig}
runs=${2:-300}
rss_runs=5
inputs=(tests/data/hwloc/nvidiaDGX2.xml tests/data/hwloc-aws/p4d.xml
        tests/data/hwloc-aws/p5en.xml tests/data/hwloc-aws/p6-b200.xml)
export GPURIG_DATA=$PWD/data

need() { echo "topo_vs_lstopo: $1" >&2; exit 3; }
[ "${BASH_VERSINFO[0]}" -ge 5 ] && [ -n "${EPOCHREALTIME:-}" ] || need "needs bash 5 or later (EPOCHREALTIME)"
command -v lstopo-no-graphics >/dev/null || need "needs lstopo-no-graphics: apt-get install hwloc-nox"
[ -x /usr/bin/time ] || need "needs GNU time as /usr/bin/time (peak RSS): apt-get install time"
for t in awk sort uname nproc; do command -v "$t" >/dev/null || need "needs $t"; done
[ -x "$gpurig" ] || need "no gpurig binary at $gpurig: build it first (./setup.sh run)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/topo_vs_lstopo.sh [GPURIG] [RUNS]" >&2; exit 2; }
for x in "${inputs[@]}"; do [ -r "$x" ] || need "missing input $x"; done

tmp=$(mktemp -d) || exit 3
trap 'rm -rf "$tmp"' EXIT

# The two commands for input $1, as arrays A and B.
cmds() { A=("$gpurig" topo --input "$1"); B=(lstopo-no-graphics --whole-io --input "$1"); }
# ok NAME RC: gpurig exits 1 when a finding is a warning (docs/cli.md); anything else is a failure.
ok() { [ "$2" -eq 0 ] || { [ "$1" = gpurig ] && [ "$2" -eq 1 ]; }; }

# Both commands must succeed before they are timed (this is also the warm-up).
for x in "${inputs[@]}"; do
  cmds "$x"
  "${A[@]}" >/dev/null 2>"$tmp/err"; rc=$?
  ok gpurig $rc || { echo "gpurig failed (exit $rc): ${A[*]}" >&2; cat "$tmp/err" >&2; exit 2; }
  "${B[@]}" >/dev/null 2>"$tmp/err"; rc=$?
  ok lstopo $rc || { echo "lstopo failed (exit $rc): ${B[*]}" >&2; cat "$tmp/err" >&2; exit 2; }
done

# What changes both tools' speed: the machine, libhwloc, and hwloc's libxml2 plugin, which
# libhwloc dlopens in every hwloc_topology_init when it is installed (package libhwloc-plugins).
cpu=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)
echo "machine: $(nproc) cores${cpu:+ ($cpu)}, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
libv=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' 'libhwloc[0-9]*' 2>/dev/null | awk '/^ii/ {print $2, $3}' | head -n 1)
[ -n "$libv" ] || libv="hwloc $(pkg-config --modversion hwloc 2>/dev/null || echo '?')"
echo "hwloc: lstopo-no-graphics $(lstopo-no-graphics --version | awk '{print $2}'), library $libv"
plugdirs=("${HWLOC_PLUGINS_PATH:-}" "$(pkg-config --variable=libdir hwloc 2>/dev/null)/hwloc" /usr/lib/*/hwloc /usr/lib/hwloc /usr/local/lib/hwloc)
plugin_state() {
  local d pkg plugin=
  for d in "${plugdirs[@]}"; do
    [ -n "$d" ] && [ -e "$d/hwloc_xml_libxml.so" ] && { plugin=$d/hwloc_xml_libxml.so; break; }
  done
  if command -v dpkg-query >/dev/null; then
    pkg=$(dpkg-query -W -f='${db:Status-Abbrev}' libhwloc-plugins 2>/dev/null | awk '{print $1}')
  else
    pkg=nodpkg
  fi
  case $pkg in
    ii) pkg="libhwloc-plugins installed" ;;
    "" | un | pn | rc) pkg="libhwloc-plugins not installed" ;;
    nodpkg) pkg="no dpkg to ask for libhwloc-plugins" ;;
    *) pkg="libhwloc-plugins: dpkg status $pkg" ;;
  esac
  if [ -n "$plugin" ]; then
    echo "$plugin ($pkg): hwloc loads it and parses XML with libxml2 unless blacklisted"
  else
    echo "absent ($pkg): both tools parse with hwloc's built-in minimalistic XML parser"
  fi
}
plugin_before=$(plugin_state)
echo "hwloc_xml_libxml plugin: $plugin_before"
env | grep '^HWLOC_' | sed 's/^/environment: /'
echo "gpurig: $gpurig ($("$gpurig" --version 2>/dev/null | head -n 1))"
echo "rounds: $runs, each input once per round, order alternating (gpurig first on even rounds)"

# One timed run: wall (us) into W, the child's user+sys (ms, cumulative) read before and after.
cpu_ms() { # the children's user+sys so far, ms, into C
  times >"$tmp/times"
  local self u s t
  { read -r self; read -r u s; } <"$tmp/times"
  C=0
  for t in "$u" "$s"; do # XmY.YYYs
    local m=${t%%m*} sec=${t#*m}
    sec=${sec%s}
    C=$((C + m * 60000 + 10#${sec/./}))
  done
}
timed() { # NAME cmd...: appends to the arrays wall_NAME and cpu_NAME
  local name=$1 t0 t1 c0 rc
  shift
  cpu_ms; c0=$C
  t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1
  rc=$?
  t1=$EPOCHREALTIME
  cpu_ms
  ok "$name" $rc || { echo "$name failed (exit $rc) while timed: $*" >&2; exit 2; }
  W=$((10#${t1/./} - 10#${t0/./}))
  CPU=$((C - c0))
}

start=$EPOCHREALTIME
for ((r = 0; r < runs; r++)); do
  for i in "${!inputs[@]}"; do
    cmds "${inputs[$i]}"
    if ((r % 2 == 0)); then
      timed gpurig "${A[@]}"; gw=$W gc=$CPU
      timed lstopo "${B[@]}"; lw=$W lc=$CPU
    else
      timed lstopo "${B[@]}"; lw=$W lc=$CPU
      timed gpurig "${A[@]}"; gw=$W gc=$CPU
    fi
    echo "$gw $lw $gc $lc" >>"$tmp/pairs.$i"
  done
done
elapsed=$(((10#${EPOCHREALTIME/./} - 10#${start/./}) / 1000000))

# Peak RSS (KB): median of rss_runs runs each, alternating, outside the timed rounds.
for i in "${!inputs[@]}"; do
  cmds "${inputs[$i]}"
  for ((k = 0; k < rss_runs; k++)); do
    /usr/bin/time -f %M -o "$tmp/m" "${A[@]}" >/dev/null 2>&1; tail -n 1 "$tmp/m" >>"$tmp/rss_g.$i"
    /usr/bin/time -f %M -o "$tmp/m" "${B[@]}" >/dev/null 2>&1; tail -n 1 "$tmp/m" >>"$tmp/rss_l.$i"
  done
done

median() { sort -n | awk '{a[NR] = $1} END {if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
# Instructions: one callgrind run of each tool per input.
ir_of() { # command...: the instructions callgrind counted, or - without valgrind
  if [ "${GPURIG_BENCH_IR:-1}" = 0 ] || ! command -v valgrind >/dev/null; then echo -; return; fi
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*refs: *//p' | tr -d ,
}
for i in "${!inputs[@]}"; do
  cmds "${inputs[$i]}"
  echo "$(ir_of "${A[@]}") $(ir_of "${B[@]}")" >"$tmp/ir.$i"
done

echo
echo "| input | gpurig median wall | lstopo median wall | wall ratio (median of pairs) | gpurig cpu/run | lstopo cpu/run | cpu ratio | gpurig / lstopo instructions | instruction ratio | peak RSS gpurig / lstopo |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for i in "${!inputs[@]}"; do
  p=$tmp/pairs.$i
  gw=$(awk '{print $1}' "$p" | median)
  lw=$(awk '{print $2}' "$p" | median)
  wr=$(awk '{print $1 / $2}' "$p" | median)
  rg=$(median <"$tmp/rss_g.$i")
  rl=$(median <"$tmp/rss_l.$i")
  read -r ig il <"$tmp/ir.$i"
  awk -v name="$(basename "${inputs[$i]}")" -v gw="$gw" -v lw="$lw" -v wr="$wr" -v rg="$rg" -v rl="$rl" -v ig="$ig" -v il="$il" '
    {g += $3; l += $4}
    END {ir = (ig != "-" && il + 0 > 0) ? sprintf("%.1f M / %.1f M", ig / 1e6, il / 1e6) : "-"
         rr = (ig != "-" && il + 0 > 0) ? sprintf("**%.2f**", ig / il) : "-"
         printf "| %s | %d us | %d us | **%.2f** | %.1f ms | %.1f ms | %.2f | %s | %s | %d / %d KB |\n",
         name, gw, lw, wr, g / NR, l / NR, (l > 0 ? g / l : 0), ir, rr, rg, rl}' "$p"
done
echo
echo "ratios below 1.00: gpurig faster; project goal: 0.60 or less, wall and instructions. ${runs} rounds in ${elapsed} s; load average now $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
plugin_after=$(plugin_state)
[ "$plugin_after" = "$plugin_before" ] ||
  echo "WARNING: the hwloc_xml_libxml plugin changed during the run, now: $plugin_after; the numbers mix both states"
