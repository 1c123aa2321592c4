#!/usr/bin/env bash
# A real Prometheus server scrapes `gpurig export` (stand-in NVIDIA libraries,
# a copy of tests/data/trees/epyc-riser whose root port 0000:00:03.1 counts
# correctable AER errors while the test runs). The test checks the scrape with
# promtool, then asks Prometheus's HTTP API for the series and the value the
# fixture set, then makes GPU2 fall off the bus and asks for gpurig_gpu_up 0, and checks
# that every series names the host Hostname (one case, as dcgm-exporter; none without it) and gpurig_driver_up 1.
# Loopback only, bounded in time, and it stops what it started.
# With GPURIG_MONITOR_VALGRIND=1 the exporter runs under valgrind (setup.sh's
# valgrind stage): no error, no definite leak, through the GPU vanishing.
# usage: prometheus.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
for tool in prometheus promtool curl jq; do
  command -v "$tool" >/dev/null || { echo "prometheus.sh: $tool is not installed (setup.sh installs it)" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "prometheus.sh: FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }

. "$(dirname "$0")/lib.sh" # free_port, until_ok

cp -a "$GPURIG_TEST_DATA/trees/epyc-riser" "$work/tree"
aer=$work/tree/sys/devices/pci0000:00/0000:00:03.1/aer_dev_correctable
echo vanilla > "$work/scenario"
gp=$(free_port)
under=()
wait_s=15
if [ "${GPURIG_MONITOR_VALGRIND:-}" = 1 ]; then
  under=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --log-file="$work/valgrind.txt")
  wait_s=60
fi
GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB GPURIG_STUB_SCENARIO_FILE=$work/scenario \
  "${under[@]}" "$gpurig" export --listen "127.0.0.1:$gp" --root "$work/tree" --interval 0.2 >"$work/export.log" 2>&1 &
pids+=($!)
until_ok "$wait_s" curl -sf -o "$work/scrape.txt" "http://127.0.0.1:$gp/metrics" || fail "gpurig export did not answer"

# promtool: the only complaints allowed are about dcgm-exporter's own names and labels
# (camelCase modelName/UUID/Hostname, a counter named _COUNTER), kept so dashboards work
promtool check metrics <"$work/scrape.txt" >"$work/promtool.log" 2>&1 || true
if grep -v '^DCGM_' "$work/promtool.log" | grep -q .; then fail "promtool: $(grep -v '^DCGM_' "$work/promtool.log")"; fi
grep -q 'text format parsing error' "$work/promtool.log" && fail "promtool cannot parse the scrape"
grep -q '^gpurig_power_total_watts{Hostname="[^"]*"} [0-9]' "$work/scrape.txt" || fail "no gpurig_power_total_watts in the scrape"
echo "promtool check metrics: $(wc -l <"$work/scrape.txt") lines; complaints only on dcgm-exporter's names: $(wc -l <"$work/promtool.log")"

pp=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpurig
    static_configs:
      - targets: ['127.0.0.1:$gp']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$pp" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)

# the root port's correctable count climbs to 42 and stays there
for n in 10 20 30 42; do
  printf 'RxErr %d\nBadTLP 0\nTOTAL_ERR_COR %d\n' "$n" "$n" >"$aer.new" && mv "$aer.new" "$aer"
  sleep 0.3
done

query() { # PromQL -> the API's JSON result array
  curl -sf "http://127.0.0.1:$pp/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'
}
aer_is_42() {
  local r
  r=$(query 'gpurig_pcie_aer_errors_total{severity="correctable",end="root port 0000:00:03.1"}') || return 1
  [ "$(jq -r '.[0].value[1] // empty' <<<"$r")" = 42 ] || return 1
  echo "$r" >"$work/aer.json"
}
until_ok 30 aer_is_42 || fail "Prometheus never held gpurig_pcie_aer_errors_total = 42 ($(query 'gpurig_pcie_aer_errors_total'))"
jq -e '.[0].metric | .slot == "5" and .link == "GPU1 0000:02:00.0 <-> root port 0000:00:03.1" and .job == "gpurig"' \
  "$work/aer.json" >/dev/null || fail "labels: $(cat "$work/aer.json")"
echo "Prometheus: $(jq -c '.[0] | {metric: (.metric | {link: .link, "end": .["end"], slot: .slot, severity: .severity}), value: .value[1]}' "$work/aer.json")"

# GPU2 falls off the bus: its series stays, at 0
echo vanish >"$work/scenario"
gpu2_down() { [ "$(query 'gpurig_gpu_up{gpu="2"}' | jq -r '.[0].value[1] // empty')" = 0 ]; }
until_ok 20 gpu2_down || fail "gpurig_gpu_up{gpu=\"2\"} never went to 0 ($(query 'gpurig_gpu_up'))"
up=$(query 'gpurig_gpu_up' | jq -r 'map(.metric.gpu + "=" + .value[1]) | sort | join(" ")')
echo "Prometheus: gpurig_gpu_up $up"
[ "$up" = "0=1 1=1 2=0 3=1" ] || fail "gpurig_gpu_up: $up"
# one label case for the host on every family (N13), and the driver's gauge
[ "$(query 'count({hostname!=""})' | jq length)" = 0 ] || fail "a series still has hostname=: $(query 'count by (__name__) ({hostname!=""})')"
hosts=$(query 'count by (Hostname) ({job="gpurig",Hostname!=""})' | jq length)
[ "$hosts" = 1 ] || fail "the Hostname label: $hosts values"
# and none without it (the scrape's own up and scrape_* series are Prometheus's)
nohost=$(query 'count by (__name__) ({job="gpurig",Hostname="",__name__!~"up|scrape_.*"})' | jq -c 'map(.metric.__name__)')
[ "$nohost" = '[]' ] || fail "series without Hostname: $nohost"
[ "$(query 'gpurig_driver_up' | jq -r '.[0].value[1] // empty')" = 1 ] || fail "gpurig_driver_up is not 1"
echo "Prometheus: one Hostname on every series, no hostname=; gpurig_driver_up 1"
kill -0 "${pids[0]}" || fail "gpurig export died"
# SIGTERM: it stops cleanly (exit 0; under valgrind, nothing reported)
kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=("${pids[@]:1}")
[ "$rc" = 0 ] || fail "gpurig export ended with $rc after SIGTERM$([ -s "$work/valgrind.txt" ] && cat "$work/valgrind.txt")"
if [ ${#under[@]} -gt 0 ]; then
  grep -q '^==' "$work/valgrind.txt" && fail "valgrind: $(cat "$work/valgrind.txt")"
  echo "valgrind: the exporter, through the scrapes and GPU2 vanishing: clean"
fi
echo "prometheus.sh: ok"
