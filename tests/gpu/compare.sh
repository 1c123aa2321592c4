#!/usr/bin/env bash
# bench/gpu/compare.py, the side-by-side table of the real-GPU check, on a stand-in run:
# an independent figure 2 % above gpurig's holds for host <-> GPU (3 %), 6 % above fails
# device-local (5 %), and the exit status says so. The "independent" figures here are
# gpurig's own scaled, so this tests the comparer, never a measurement.
# usage: compare.sh GPURIG   (env: GPURIG_DATA, GPURIG_TEST_STUB, GPURIG_TEST_DATA)
set -uo pipefail
gpurig=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB "$gpurig" bench --json --no-progress --size 256K --allreduce-max 64K \
  --root "$GPURIG_TEST_DATA/trees/epyc-riser" >"$tmp/g.json" 2>/dev/null
scale() { # local_factor -> torch.json
  python3 - "$tmp/g.json" "$1" >"$tmp/t.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
t = {"device": "stand-in", "copies": [], "allreduce": []}
for r in g["results"]:
    if r["engine"] == "ce" and r["test"] in ("h2d", "d2h", "local") and r["status"] == "ok":
        gpu = r["dst_gpu"] if r["test"] == "h2d" else r["src_gpu"]
        f = float(sys.argv[2]) if r["test"] == "local" else 1.02
        t["copies"].append({"test": r["test"], "gpu": gpu, "median_gbps": r["median_gbps"] * f})
json.dump(t, sys.stdout)
PY
}
fails=0
scale 1.02
python3 "$here/../../bench/gpu/compare.py" "$tmp/g.json" "$tmp/t.json" >"$tmp/out" 2>&1
rc=$?
[ $rc = 0 ] || { echo "compare: 2 % apart must hold, exit $rc:" >&2; cat "$tmp/out" >&2; fails=1; }
rows=$(grep -c '| yes |' "$tmp/out")
[ "$rows" = 12 ] || { echo "compare: want 12 rows that hold (4 GPUs x 3 tests), got $rows" >&2; fails=1; }
scale 1.06
python3 "$here/../../bench/gpu/compare.py" "$tmp/g.json" "$tmp/t.json" >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || { echo "compare: device-local 6 % apart must fail, exit $rc" >&2; fails=1; }
grep -q '| 0 | within GPU | .* | 0.943 | 5 % | NO |' "$tmp/out" || { echo "compare: no failing within-GPU row:" >&2; cat "$tmp/out" >&2; fails=1; }
python3 "$here/../../bench/gpu/compare.py" "$tmp/g.json" /nonexistent >/dev/null 2>&1
[ $? = 2 ] || { echo "compare: unreadable input must exit 2" >&2; fails=1; }
[ $fails = 0 ] && echo "compare: the side-by-side table holds 3 % and 5 % and says which rows miss"
exit $fails
