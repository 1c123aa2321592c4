#!/usr/bin/env bash
# gpurig export's HTTP server under load and in odd cases (stand-in NVIDIA
# libraries, a copy of tests/data/trees/epyc-riser): the odd requests get
# their statuses (405 with Allow), 200 parallel scrapes are all answered,
# scrapes are answered while 1,000 idle connections (slowloris heads) are
# held, also under a 1,024-descriptor limit with --textfile, whose file keeps
# being written. Then --once without --textfile, a driver that fails to
# start (gpurig_driver_up 0, gpurig_gpu_up 0 per GPU on the bus) and nothing
# to watch (exit 3). No time is asserted beyond "answered within a few
# seconds"; bench/export_load.sh measures the latencies.
# Loopback only, bounded in time, and it stops what it started.
# usage: export.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
here=$(cd "$(dirname "$0")" && pwd)
load=$here/http_load.py
command -v python3 >/dev/null || { echo "export.sh: python3 is not installed" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "export.sh: FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }
. "$(dirname "$0")/lib.sh" # free_port, until_ok
samples_in() { sed -n 's/^gpurig_samples_total{[^}]*} //p' "$1" 2>/dev/null || true; }

cp -a "$GPURIG_TEST_DATA/trees/epyc-riser" "$work/tree"
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB
mkdir "$work/tf"
port=$(free_port)
# the exporter under the 1,024-descriptor soft limit systemd gives services
(ulimit -S -n 1024 && exec "$gpurig" export --listen "127.0.0.1:$port" --root "$work/tree" --interval 0.2 \
  --textfile "$work/tf") >"$work/export.log" 2>&1 &
pids+=($!)
until_ok 15 curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" || fail "gpurig export did not answer"

# odd requests: the status each deserves
python3 "$load" raw "$port" >"$work/raw.txt" || fail "raw requests"
cat "$work/raw.txt"
for want in "post: HTTP/1.1 405 Method Not Allowed Allow: GET, HEAD" "delete: HTTP/1.1 405 .* Allow: GET, HEAD" \
  "unknown-path: HTTP/1.1 404" "http2: HTTP/1.1 505" "space-in-name: HTTP/1.1 400" "long-target: HTTP/1.1 414" \
  "long-head: HTTP/1.1 431" "get-with-body: HTTP/1.1 413" "absolute-form: HTTP/1.1 200" "head-1.0: HTTP/1.1 200" \
  "folded: HTTP/1.1 400" "two-lengths: HTTP/1.1 400"; do
  grep -q -- "^raw: $want" "$work/raw.txt" || fail "raw: no line matching '$want'"
done
# keep-alive: two scrapes on one connection
[ "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects}' "http://127.0.0.1:$port/metrics" \
  "http://127.0.0.1:$port/metrics" | tr -d '\n')" = 10 ] || fail "keep-alive: the second scrape opened a new connection"

# 200 scrapes at once, twice: every one answered with its whole body
python3 "$load" parallel "$port" 200 2 | tee "$work/parallel.txt"
grep -q 'answered 400, errors 0' "$work/parallel.txt" || fail "200 parallel scrapes: $(cat "$work/parallel.txt")"

# 1,000 connections hold a request head open; scrapes still get in
before=$(samples_in "$work/tf/gpurig.prom")
timeout 60 python3 "$load" idle "$port" 1000 4 | tee "$work/idle.txt" || fail "a scrape was refused with 1,000 idle connections held"
worst=$(sed -n 's/^idle: worst scrape \([0-9.]*\) ms/\1/p' "$work/idle.txt")
awk -v w="$worst" 'BEGIN { exit !(w < 5000) }' || fail "a scrape took $worst ms with 1,000 idle connections held"
kill -0 "${pids[0]}" || fail "gpurig export died under the flood"
# the textfile kept being written through the flood (the limit left it descriptors)
sleep 0.6
after=$(samples_in "$work/tf/gpurig.prom")
[ -n "$before" ] && [ -n "$after" ] && [ "$after" -gt "$before" ] ||
  fail "the textfile stopped during the flood (samples $before, then $after)"
grep -q 'cannot write' "$work/export.log" && fail "a textfile write failed during the flood"
echo "textfile: samples $before before the flood, $after after"
kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
[ "$rc" = 0 ] || fail "gpurig export ended with $rc after SIGTERM"

# --once without --textfile: the text once on stdout, no port opened
"$gpurig" export --once --root "$work/tree" >"$work/once.txt" 2>"$work/once.log" || fail "export --once: exit $?"
grep -q '^gpurig_gpu_up{gpu="3"' "$work/once.txt" || fail "export --once printed no metrics"
grep -q serving "$work/once.log" && fail "export --once says it serves"
echo "--once: $(grep -c '^gpurig_gpu_up' "$work/once.txt") gpurig_gpu_up lines on stdout, no port"
# the summed power: present, and the sum of the per-GPU draws the same scrape shows
total=$(sed -n 's/^gpurig_power_total_watts{[^}]*} //p' "$work/once.txt")
[ -n "$total" ] || fail "no gpurig_power_total_watts"
sum=$(sed -n 's/^DCGM_FI_DEV_POWER_USAGE{[^}]*} //p' "$work/once.txt" | awk '{s += $1; n++} END {if (n) printf "%.3f", s}')
[ -n "$sum" ] || fail "no DCGM_FI_DEV_POWER_USAGE series"
awk -v t="$total" -v s="$sum" 'BEGIN {exit !(t - s < 0.001 && s - t < 0.001)}' ||
  fail "gpurig_power_total_watts $total is not the sum $sum of the GPUs' draws"
echo "power total: $total W, the sum of $(grep -c '^DCGM_FI_DEV_POWER_USAGE{' "$work/once.txt") GPUs' draws"
# no --psu, no budget ratio; --psu W: the total over W
grep -q '^gpurig_power_budget_ratio' "$work/once.txt" && fail "gpurig_power_budget_ratio without --psu"
"$gpurig" export --once --psu 1600 --root "$work/tree" >"$work/psu.txt" 2>"$work/psu.log" || fail "export --psu 1600: exit $?"
ratio=$(sed -n 's/^gpurig_power_budget_ratio{Hostname="[^"]*"} //p' "$work/psu.txt")
total=$(sed -n 's/^gpurig_power_total_watts{[^}]*} //p' "$work/psu.txt")
[ -n "$ratio" ] && awk -v r="$ratio" -v t="$total" 'BEGIN {exit !(r - t / 1600 < 1e-5 && t / 1600 - r < 1e-5)}' ||
  fail "gpurig_power_budget_ratio '$ratio' is not $total / 1600"
echo "--psu 1600: gpurig_power_budget_ratio $ratio"
rc=0
"$gpurig" export --once --psu 12x --root "$work/tree" >"$work/psu.txt" 2>"$work/psu.log" || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$work/psu.log")" = 1 ] && [ ! -s "$work/psu.txt" ] || fail "export --psu 12x: exit $rc"

# a driver that does not start, on a bus with 4 GPUs: each GPU's series says 0
rc=0
GPURIG_STUB_SCENARIO=initfail "$gpurig" export --once --root "$work/tree" >"$work/initfail.txt" 2>"$work/initfail.log" || rc=$?
[ "$rc" = 1 ] || fail "export --once with no driver: exit $rc, not 1"
grep -q '^gpurig_driver_up{Hostname="[^"]*"} 0$' "$work/initfail.txt" || fail "no gpurig_driver_up 0"
[ "$(grep -c '^gpurig_gpu_up{.*} 0$' "$work/initfail.txt")" = 4 ] || fail "not 4 gpurig_gpu_up 0: $(grep gpu_up "$work/initfail.txt")"
rc=0
GPURIG_STUB_SCENARIO=initfail "$gpurig" watch --once --json --root "$work/tree" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "watch with no driver on a bus with GPUs exits 0"
echo "no driver: gpurig_driver_up 0, 4 x gpurig_gpu_up 0, export --once exit 1, watch exit $rc"

# nothing to watch: no driver, and the tree without its 4 GPUs (no GPU, no GPU link)
cp -a "$GPURIG_TEST_DATA/trees/epyc-riser" "$work/empty"
for d in 0000:01:00.0 0000:02:00.0 0000:41:00.0 0000:44:00.0; do
  rm -rf "$(readlink -f "$work/empty/sys/bus/pci/devices/$d")" "$work/empty/sys/bus/pci/devices/$d"
done
for cmd in "watch --once" "export --once"; do
  rc=0
  GPURIG_DRIVER_DIR=/nonexistent "$gpurig" $cmd --root "$work/empty" >/dev/null 2>"$work/empty.log" || rc=$?
  [ "$rc" = 3 ] || fail "$cmd with nothing to watch: exit $rc, not 3 ($(cat "$work/empty.log"))"
done
echo "nothing to watch: watch and export exit 3"

# one label case for the host across families (N13)
grep -q 'hostname=' "$work/once.txt" && fail "a series still says hostname="
echo "export.sh: ok"
