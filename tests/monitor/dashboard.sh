#!/usr/bin/env bash
# The Grafana dashboard contrib/grafana/gpurig.json against a real Prometheus
# scraping two `gpurig export`s with the stand-in NVIDIA libraries:
#   A: a copy of tests/data/trees/epyc-riser, scenario xid (4 RTX 3090s: AER
#      counts at a root port, GPU1 at x8 and replaying, GPU2's link at Gen1,
#      an Xid 79 on GPU2, doctor's findings);
#   B: tests/data/trees/hgx-a100, scenario a100-nvswitch (8 A100s: NVLink error
#      totals, ECC, row remapping, memory temperature).
# Every target of every panel, with Grafana's variables put in ($Hostname from
# the dashboard's own label_values query, $__rate_interval, $__interval,
# $__range), must return data: a query that returns nothing fails the test.
# Then NVIDIA's dcgm-exporter dashboard's queries (grafana/dcgm-exporter-
# dashboard.json, as docs/monitor.md lists them): those docs/monitor.md says
# work must return data, the one it says does not must return none.
# Loopback only, bounded in time, and it stops what it started.
# usage: dashboard.sh GPURIG [DASHBOARD.json]   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
here=$(cd "$(dirname "$0")" && pwd)
dash=${2:-$here/../../contrib/grafana/gpurig.json}
for tool in prometheus curl jq; do
  command -v "$tool" >/dev/null || { echo "dashboard.sh: $tool is not installed (setup.sh installs it)" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "dashboard.sh: FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }

. "$(dirname "$0")/lib.sh" # free_port, until_ok

# ---- the dashboard's shape: what the panels must read, and how they pick the host
jq -e . "$dash" >/dev/null || fail "$dash is not JSON"
jq -e '.schemaVersion >= 39' "$dash" >/dev/null || fail "schemaVersion $(jq .schemaVersion "$dash"): not a current Grafana's"
jq -e '.templating.list | map(select(.name == "datasource" and .type == "datasource" and .query == "prometheus")) | length == 1' \
  "$dash" >/dev/null || fail "no datasource variable of type prometheus"
var_query=$(jq -r '.templating.list[] | select(.name == "Hostname") | .query.query // .query' "$dash")
[ "$var_query" = 'label_values(gpurig_gpu_up, Hostname)' ] || fail "the Hostname variable's query: '$var_query'"
# every panel but a row has targets; every target reads the chosen data source and picks the host
jq -c '[.panels[] | select(.type != "row")] | map(select((.targets // []) | length == 0) | .title)' "$dash" >"$work/notargets"
[ "$(cat "$work/notargets")" = '[]' ] || fail "panels without a query: $(cat "$work/notargets")"
jq -c '[.panels[] | select(.type != "row") | . as $p | .targets[]
        | select(.datasource.uid != "${datasource}" or $p.datasource.uid != "${datasource}"
                 or (.expr | contains("Hostname=~\"$Hostname\"") | not)) | "\($p.title) \(.refId)"]' \
  "$dash" >"$work/unpicked"
[ "$(cat "$work/unpicked")" = '[]' ] || fail "targets not on \${datasource} or not picking \$Hostname: $(cat "$work/unpicked")"
# a query that cannot come back empty (absent(), or "or vector(0)") would pass whatever gpurig serves
jq -c '[.panels[].targets[]?.expr | select(test("vector\\(|absent\\("))]' "$dash" >"$work/unfailing"
[ "$(cat "$work/unfailing")" = '[]' ] || fail "queries that return data whatever is scraped: $(cat "$work/unfailing")"
# what the dashboard is for (issue 33 item 4): each of these series is read by some panel
for s in DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_POWER_USAGE DCGM_FI_DEV_POWER_MGMT_LIMIT DCGM_FI_DEV_SM_CLOCK \
  DCGM_FI_DEV_MEM_CLOCK gpurig_gpu_throttle DCGM_FI_DEV_GPU_UTIL gpurig_pcie_aer_errors_total \
  DCGM_FI_DEV_PCIE_REPLAY_COUNTER gpurig_pcie_link_gen gpurig_pcie_link_gen_max gpurig_pcie_link_width \
  gpurig_pcie_link_width_max DCGM_FI_DEV_XID_ERRORS gpurig_gpu_up gpurig_driver_up \
  DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL \
  DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL gpurig_finding \
  gpurig_sample_age_seconds; do
  jq -e --arg s "$s" '[.panels[].targets[]?.expr] | map(test("(^|[^A-Za-z_])" + $s + "([^A-Za-z_]|$)")) | any' \
    "$dash" >/dev/null || fail "no panel reads $s"
done

# ---- two exporters and a Prometheus scraping both
cp -a "$GPURIG_TEST_DATA/trees/epyc-riser" "$work/tree"
ga=$(free_port)
GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB GPURIG_STUB_SCENARIO=xid \
  "$gpurig" export --listen "127.0.0.1:$ga" --root "$work/tree" --interval 0.2 >"$work/export-a.log" 2>&1 &
pids+=($!)
gb=$(free_port)
[ "$gb" != "$ga" ] || gb=$(free_port)
GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB GPURIG_STUB_SCENARIO=a100-nvswitch \
  "$gpurig" export --listen "127.0.0.1:$gb" --root "$GPURIG_TEST_DATA/trees/hgx-a100" --interval 0.2 \
  >"$work/export-b.log" 2>&1 &
pids+=($!)
until_ok 20 curl -sf -o /dev/null "http://127.0.0.1:$ga/metrics" || fail "gpurig export (epyc-riser) did not answer"
until_ok 20 curl -sf -o /dev/null "http://127.0.0.1:$gb/metrics" || fail "gpurig export (hgx-a100) did not answer"

pp=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpurig
    static_configs:
      - targets: ['127.0.0.1:$ga', '127.0.0.1:$gb']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$pp" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)
api="http://127.0.0.1:$pp/api/v1"
t0=$(date +%s)

# the root port's correctable count rises while Prometheus scrapes, so the AER panel has a rate to show
aer=$work/tree/sys/devices/pci0000:00/0000:00:03.1/aer_dev_correctable
( for n in 10 20 30 40 50 60; do
    printf 'RxErr %d\nBadTLP 0\nTOTAL_ERR_COR %d\n' "$n" "$n" >"$aer.new" && mv "$aer.new" "$aer"
    sleep 1
  done ) &
pids+=($!)

# ---- the Hostname variable, as Grafana fills it: label_values(gpurig_gpu_up, Hostname)
hosts_ok() {
  curl -sf -G "$api/label/Hostname/values" --data-urlencode 'match[]=gpurig_gpu_up' >"$work/hosts.json" &&
    jq -e '.data | length > 0' "$work/hosts.json" >/dev/null
}
until_ok 30 hosts_ok || fail "label_values(gpurig_gpu_up, Hostname) is empty"
host=$(jq -r '.data[0]' "$work/hosts.json")
[ "$host" = "$(hostname)" ] || fail "the Hostname variable gives '$host', this machine is '$(hostname)'"
echo "Hostname variable: label_values(gpurig_gpu_up, Hostname) = $(jq -c .data "$work/hosts.json")"
# Grafana puts a multi-value variable into =~ as a regular expression, its metacharacters escaped
host_re=$(printf '%s' "$host" | sed 's/[][\\.^$*+?(){}|]/\\\\&/g')

# ---- every target returns data
subst() { # PromQL with Grafana's variables -> PromQL
  local q=$1
  q=${q//'${Hostname}'/$host_re}
  q=${q//'$Hostname'/$host_re}
  q=${q//'$__rate_interval'/5s}
  q=${q//'$__interval'/1s}
  q=${q//'$__range'/60s}
  printf '%s' "$q"
}
ask() { # instant|range PromQL -> the API's answer in $work/answer.json; false on an API error
  local now; now=$(date +%s)
  if [ "$1" = instant ]; then
    curl -s "$api/query" --data-urlencode "query=$2" >"$work/answer.json"
  else
    curl -s "$api/query_range" --data-urlencode "query=$2" --data-urlencode "start=$t0" \
      --data-urlencode "end=$now" --data-urlencode "step=1" >"$work/answer.json"
  fi
  jq -e '.status == "success"' "$work/answer.json" >/dev/null 2>&1
}
has_data() { # instant|range PromQL: true when some series has a value
  ask "$1" "$2" || return 1
  jq -e '([.data.result[] | (.values // [.value]) | length] | add // 0) > 0' "$work/answer.json" >/dev/null
}
deadline=$((SECONDS + 45)) # for all targets together: the first scrapes, two points for rate(), the Xid
empty=()
jq -r '.panels[] | select(.type != "row") | . as $p | .targets[]
       | [$p.title, .refId, (if .instant == true then "instant" else "range" end), .expr] | @tsv' "$dash" >"$work/targets.tsv"
ntargets=0
while IFS=$'\t' read -r title ref kind expr; do
  ntargets=$((ntargets + 1))
  q=$(subst "$expr")
  case $q in *'$'*) fail "$title $ref: a variable this test does not know: $q" ;; esac
  until has_data "$kind" "$q"; do
    if jq -e '.status == "error"' "$work/answer.json" >/dev/null 2>&1; then
      fail "$title $ref: Prometheus refuses the query: $(jq -r .error "$work/answer.json"): $q"
    fi
    [ $SECONDS -lt $deadline ] || break
    sleep 0.5
  done
  n=$(jq '.data.result | length' "$work/answer.json" 2>/dev/null || echo 0)
  if [ "$n" -gt 0 ] && has_data "$kind" "$q"; then
    printf '  %-40s %s  %3s series  %s\n' "$title" "$ref" "$n" "$q"
  else
    printf '  %-40s %s  NO DATA     %s\n' "$title" "$ref" "$q"
    empty+=("$title $ref")
  fi
done <"$work/targets.tsv"
[ ${#empty[@]} = 0 ] || fail "${#empty[@]} of $ntargets dashboard queries returned no data: ${empty[*]}"
echo "dashboard: all $ntargets queries of $(jq '[.panels[] | select(.type != "row")] | length' "$dash") panels returned data"

# ---- NVIDIA's dcgm-exporter dashboard (its variables: instance and gpu, both label_values of DCGM_FI_DEV_GPU_TEMP)
for lbl in instance gpu; do
  curl -sf -G "$api/label/$lbl/values" --data-urlencode 'match[]=DCGM_FI_DEV_GPU_TEMP' >"$work/v.json" || fail "label values $lbl"
  jq -e '.data | length > 0' "$work/v.json" >/dev/null || fail "NVIDIA's variable label_values(DCGM_FI_DEV_GPU_TEMP, $lbl) is empty"
  echo "  NVIDIA variable label_values(DCGM_FI_DEV_GPU_TEMP, $lbl): $(jq -c .data "$work/v.json")"
done
inst_re="127\\\\.0\\\\.0\\\\.1:$ga"  # one instance, as Grafana escapes it
sel="instance=~\"$inst_re\", gpu=~\"(0|1|2|3)\""
works=("DCGM_FI_DEV_GPU_TEMP{$sel}" "avg(DCGM_FI_DEV_GPU_TEMP{$sel})" "DCGM_FI_DEV_POWER_USAGE{$sel}"
  "sum(DCGM_FI_DEV_POWER_USAGE{$sel})" "DCGM_FI_DEV_SM_CLOCK{$sel} * 1000000" "DCGM_FI_DEV_GPU_UTIL{$sel}"
  "DCGM_FI_DEV_FB_USED{$sel}")
for q in "${works[@]}"; do
  has_data range "$q" || fail "NVIDIA's query returns no data: $q"
  echo "  NVIDIA works: $q ($(jq '.data.result | length' "$work/answer.json") series)"
done
q="DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{$sel}" # a profiling field: docs/monitor.md says gpurig has none
ask range "$q" || fail "Prometheus refuses $q"
[ "$(jq '.data.result | length' "$work/answer.json")" = 0 ] || fail "$q returns data: docs/monitor.md says it does not"
echo "  NVIDIA does not work (as documented): $q"

for i in 0 1; do kill -0 "${pids[$i]}" || fail "a gpurig export died"; done
echo "dashboard.sh: ok"
