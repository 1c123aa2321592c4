#!/usr/bin/env bash
# How gpurig's cost grows with GPU count (docs/bench.md, "Scaling with GPU count").
#
#   bench/scaling.sh [GPURIG] [RUNS]
#
# Generates synthetic rigs into a temporary directory (2 sockets, PEX88096 switches of 4 GPUs
# each, Gen4, as the performance review's synN rigs) for 8 to 256 GPUs, and times on each:
#   topo --rig R                                   (load, analyse, predict, print)
#   compare R                                      (the same through compare's ranking)
#   plan --model llama-2-70b --job full --zero 3 --rig R   (predict plus the group bandwidths plan asks for)
# plus the bundled 10-GPU sys-4029gp-trt2 against the bundled 8-GPU rigs. Each figure is the
# median wall time of RUNS runs (default 11) in ms, from bash's EPOCHREALTIME, and the peak RSS
# (median of 3, /usr/bin/time -f %M) when /usr/bin/time exists.
#
# Then, from 64 to 512 GPUs (hwloc XML, the same layout), the instructions of topo, report,
# topo --json and topo --svg - (valgrind --tool=callgrind, whole process: deterministic where wall
# time is not),
# the peak RSS of topo --json, the ratio from 256 to 512 GPUs and the exponent b of Ir = a n^b
# fitted by least squares over 64-512 (2.0 is quadratic: the GPU matrices topo and --json print
# are n x n). GPURIG_BENCH_IR=0 skips that table (it takes minutes under callgrind).
# GPURIG_BENCH_GEN="CMD" takes that table's XML from `CMD N` instead (the performance review's
# generator: GPURIG_BENCH_GEN="python3 ../shared/tools/gen_xml.py", 8 H100 SXM per switch).
# Nothing is asserted: a script, not a test. Needs bash 5.
set -uo pipefail
GPURIG=${1:-build/gpurig}
RUNS=${2:-11}
command -v "$GPURIG" >/dev/null || [ -x "$GPURIG" ] || { echo "scaling: no gpurig at $GPURIG" >&2; exit 3; }
[ -n "${EPOCHREALTIME:-}" ] || { echo "scaling: needs bash 5 (EPOCHREALTIME)" >&2; exit 3; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# syn N: N/8 switches of 4 GPUs on each of two sockets (N a multiple of 8)
make_rig() { # gpus file
  local n=$1 f=$2 per=$(( $1 / 8 ))
  {
    echo "rig \"synthetic $n GPUs: 2 sockets x $per PEX88096 x 4 A100 PCIe\""
    echo "cpu cpu0 \"EPYC 7763\" vendor amd channels 8 memory 3200"
    echo "cpu cpu1 \"EPYC 7763\" vendor amd channels 8 memory 3200"
    for s in 0 1; do
      for ((i = 0; i < per; i++)); do
        echo "rootcomplex rc${s}_$i cpu$s gen4"
        echo "switch sw${s}_$i rc${s}_$i model \"PEX88096\" lanes 96 gen4 uplink gen4 x16"
        echo "gpu 4 \"A100 PCIe 80GB\" sw${s}_$i"
      done
    done
  } > "$f"
}

# the same layout as hwloc XML, for sizes beyond one rig's PCI domain (255 buses): one PCI
# domain per socket-and-8-switches, a host bridge per switch, switch ports as PCI bridges
make_xml() { # gpus file
  awk -v n="$1" 'BEGIN {
    per = n / 8; gp = 10
    print "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    print "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">"
    print "<topology version=\"2.0\">"
    print " <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" allowed_cpuset=\"0x00000003\" nodeset=\"0x00000003\" complete_nodeset=\"0x00000003\" allowed_nodeset=\"0x00000003\" gp_index=\"1\">"
    for (s = 0; s < 2; s++) {
      cs = sprintf("0x%08x", 2 ^ s); ns = cs
      printf "  <object type=\"Package\" os_index=\"%d\" cpuset=\"%s\" complete_cpuset=\"%s\" nodeset=\"%s\" complete_nodeset=\"%s\" gp_index=\"%d\">\n", s, cs, cs, ns, ns, gp++
      print "   <info name=\"CPUVendor\" value=\"AuthenticAMD\"/>"
      print "   <info name=\"CPUModel\" value=\"AMD EPYC 7763 64-Core Processor\"/>"
      printf "   <object type=\"NUMANode\" os_index=\"%d\" cpuset=\"%s\" complete_cpuset=\"%s\" nodeset=\"%s\" complete_nodeset=\"%s\" gp_index=\"%d\" local_memory=\"68719476736\"/>\n", s, cs, cs, ns, ns, gp++
      printf "   <object type=\"PU\" os_index=\"%d\" cpuset=\"%s\" complete_cpuset=\"%s\" nodeset=\"%s\" complete_nodeset=\"%s\" gp_index=\"%d\"/>\n", s, cs, cs, ns, ns, gp++
      for (i = 0; i < per; i++) {
        sw = s * per + i; dom = int(sw / 8); b = (sw % 8) * 16 + 1
        printf "   <object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"%04x:[%02x-%02x]\">\n", gp++, dom, b, b + 6
        printf "    <object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"%04x:[%02x-%02x]\" pci_busid=\"%04x:%02x:00.0\" pci_type=\"0604 [1000:c010] [1000:a064] b0\" pci_link_speed=\"31.507692\">\n", gp++, dom, b + 1, b + 6, dom, b
        for (g = 0; g < 4; g++) {
          printf "     <object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"2\" bridge_pci=\"%04x:[%02x-%02x]\" pci_busid=\"%04x:%02x:%02x.0\" pci_type=\"0604 [1000:c010] [1000:a064] b0\" pci_link_speed=\"31.507692\">\n", gp++, dom, b + 3 + g, b + 3 + g, dom, b + 2, g
          printf "      <object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"%04x:%02x:00.0\" pci_type=\"0302 [10de:20b5] [10de:1533] a1\" pci_link_speed=\"31.507692\"/>\n", gp++, dom, b + 3 + g
          print "     </object>"
        }
        print "    </object>"
        print "   </object>"
      }
      print "  </object>"
    }
    print " </object>"
    print "</topology>"
  }' > "$2"
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }

# median wall ms of RUNS runs of gpurig "$@" (exit 0, 1, 2 or 4 accepted: the input was checked by topo)
time_ms() {
  local t0 t1 i
  for ((i = 0; i < RUNS; i++)); do
    t0=$EPOCHREALTIME
    "$GPURIG" "$@" >/dev/null 2>&1
    case $? in 0|1|2|4) ;; *) echo "fail"; return ;; esac # 2: "does not fit" before exit 4 existed
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
  done | median
}

rss_kb() {
  [ -x /usr/bin/time ] || { echo "-"; return; }
  for i in 1 2 3; do /usr/bin/time -f %M "$GPURIG" "$@" 2>&1 >/dev/null | tail -1; done | median
}

echo "# gpurig $("$GPURIG" --version 2>/dev/null | awk '{ print $2 }'), $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $RUNS runs, median wall ms"
printf '%-26s %8s %10s %10s %12s\n' input gpus topo_ms compare_ms plan_full_ms
for n in 8 16 32 64 128 256 512; do
  src=()
  if [ "$n" -le 64 ]; then
    f=$WORK/syn$n.rig src=(--rig "$f") what=syn$n.rig
    make_rig "$n" "$f"
  else
    f=$WORK/syn$n.xml src=(--input "$f") what=syn$n.xml
    make_xml "$n" "$f"
  fi
  if ! "$GPURIG" topo "${src[@]}" >/dev/null 2>"$WORK/err"; then
    case $? in 1) ;; *) printf '%-26s %8s  %s\n' "$what" "$n" "refused: $(head -1 "$WORK/err")"; continue ;; esac
  fi
  cmp_ms=-
  [ "${src[0]}" = --rig ] && cmp_ms=$(time_ms compare "$f") # compare takes rigs
  printf '%-26s %8s %10s %10s %12s   peak RSS %s KB\n' "$what" "$n" "$(time_ms topo "${src[@]}")" "$cmp_ms" \
    "$(time_ms plan --model llama-2-70b --job full --zero 3 "${src[@]}")" \
    "$(rss_kb topo "${src[@]}")"
done
for r in sys-4029gp-trt2:10 sys-4028gr-tr-x10drg:8 sys-4028gr-tr-x9drg:8 gigabyte-g482:8; do
  n=${r#*:} r=${r%:*}
  printf '%-26s %8s %10s %10s %12s\n' "$r" "$n" \
    "$(time_ms topo --rig "$r")" "$(time_ms compare "$r")" "$(time_ms plan --model llama-2-70b --job full --zero 3 --rig "$r")"
done

# instructions, 64 to 512 GPUs
[ "${GPURIG_BENCH_IR:-1}" != 0 ] || exit 0
command -v valgrind >/dev/null || { echo "scaling: no valgrind: no instruction table" >&2; exit 0; }
ir_of() { # command...: instructions callgrind counted (whole process)
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*refs: *//p' | tr -d ,
}
echo
what="of the same layout"
[ -z "${GPURIG_BENCH_GEN:-}" ] || what="from $GPURIG_BENCH_GEN"
echo "instructions (callgrind), hwloc XML $what:"
printf '%6s %14s %14s %14s %14s %16s\n' gpus topo report topo_json topo_svg json_peak_rss_KB
sizes=(64 128 256 512)
for n in "${sizes[@]}"; do
  f=$WORK/syn$n.xml
  if [ -n "${GPURIG_BENCH_GEN:-}" ]; then
    $GPURIG_BENCH_GEN "$n" >"$f" || { echo "scaling: $GPURIG_BENCH_GEN $n failed" >&2; exit 3; }
  else
    make_xml "$n" "$f"
  fi
  t=$(ir_of "$GPURIG" topo --input "$f") r=$(ir_of "$GPURIG" report --input "$f") j=$(ir_of "$GPURIG" topo --json --input "$f")
  v=$(ir_of "$GPURIG" topo --svg - --input "$f")
  printf '%6s %14s %14s %14s %14s %16s\n' "$n" "$t" "$r" "$j" "$v" "$(rss_kb topo --json --input "$f")"
  echo "$n $t $r $j $v" >>"$WORK/ir"
done
# b of Ir = a n^b by least squares on (ln n, ln Ir); and Ir(512) / Ir(256)
awk '{ for (c = 2; c <= 5; c++) { x = log($1); y = log($c); sx[c] += x; sy[c] += y; sxx[c] += x * x; sxy[c] += x * y; v[$1, c] = $c }; k++ }
  END {
    split("topo report topo_json topo_svg", name, " ")
    for (c = 2; c <= 5; c++)
      printf "%-10s exponent over 64-512: %.2f   512/256: %.2fx\n", name[c - 1],
             (k * sxy[c] - sx[c] * sy[c]) / (k * sxx[c] - sx[c] * sx[c]), v[512, c] / v[256, c]
  }' "$WORK/ir"
