#!/usr/bin/env bash
# What gpurig export's HTTP server does under load, on loopback, with the
# stand-in NVIDIA libraries (build/tests/stub) on the fixture hgx-a100
# (8 GPUs, a body of about 64 KB) unless another tree is named:
#   - 200 scrapes sent at once, 5 rounds: answered, errors, p50, p99, max
#     (each latency from the request's send to its whole response, measured
#     by tests/monitor/http_load.py, a one-thread selector client);
#   - scrapes while 1,000 connections hold a request head open (slowloris),
#     the exporter under the 1,024-descriptor limit systemd gives services;
#   - the exporter's CPU per scrape over 2,000 sequential scrapes.
# The client runs on the same machine: on 2 cores its own time is in the
# figures. Nothing here is a test: tests/monitor/export.sh holds the
# behaviour, this prints the numbers for docs/bench.md and the issue note.
# usage: bench/export_load.sh [GPURIG] [TREE]   (from the repository root)
set -euo pipefail
gpurig=${1:-build/gpurig}
tree=${2:-tests/data/trees/hgx-a100}
export GPURIG_DATA=${GPURIG_DATA:-$PWD/data}
export GPURIG_DRIVER_DIR=${GPURIG_DRIVER_DIR:-$PWD/build/tests/stub}
case $tree in *hgx-a100*) export GPURIG_STUB_SCENARIO=${GPURIG_STUB_SCENARIO:-a100-nvswitch} ;; esac
load=tests/monitor/http_load.py
port=$((20000 + RANDOM % 12000))
(ulimit -S -n 1024 && exec "$gpurig" export --listen "127.0.0.1:$port" --root "$tree" --interval 1) 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break; sleep 0.2; done
echo "body: $(curl -s "http://127.0.0.1:$port/metrics" | wc -c) bytes, $(curl -s "http://127.0.0.1:$port/metrics" | grep -vc '^#') series"
python3 "$load" parallel "$port" 200 5
python3 "$load" idle "$port" 1000 5 | sed -n '1p;$p'
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks)
python3 - "$port" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for _ in range(2000):
    c.request("GET", "/metrics"); c.getresponse().read()
PY
t1=$(ticks)
awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "CPU per scrape (2,000 on one keep-alive connection): %.1f us\n", d / hz / 2000 * 1e6 }'
