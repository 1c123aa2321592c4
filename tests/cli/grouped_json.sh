#!/usr/bin/env bash
# topo --json above 64 GPUs (docs/json.md, "Grouped matrices"): the 72-GPU synthetic XML's document
# is grouped, every group, matrix and group pair is where a consumer looks for it (grouped_json.py
# expands it back to per-GPU members), and the GPU made unlike its neighbours is a group of its own
# whose pairs keep its own figures.
#   tests/cli/grouped_json.sh GPURIG
set -u
gpurig=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gpurig" topo --json --input "$here/../data/synthetic/h100-72.xml" >"$tmp/g.json" || { echo "FAIL: topo --json exited $?"; exit 1; }
python3 "$here/grouped_json.py" "$tmp/g.json" || exit 1
python3 - "$tmp/g.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
groups = [g["gpus"] for g in d["gpu_groups"]]
want = [list(range(0, 8)), [8, 9, 10, 11, 12, 14, 15], [13]] + [list(range(k, k + 8)) for k in range(16, 72, 8)]
assert groups == want, "groups %s" % groups
pairs = {(p["from_group"], p["to_group"]): p for p in d["gpu_group_pairs"]}
assert (2, 2) not in pairs, "a group of one GPU has a pair with itself"
p = pairs[(0, 2)]  # GPU0-7 to GPU13: GPU13's half-rate link holds it
assert p["bw_gbps"] == 31.51 and p["bottleneck_own"] == "to" and p["bottleneck_pci_bus_ids"] == ["0000:26:00.0"], p
assert d["gpu_matrix"][1][1] == "NV18" and d["gpu_matrix"][2][2] == "X", d["gpu_matrix"][1]
assert d["bw_matrix_gbps"][2][2] is None and d["bw_matrix_gbps"][1][1] == 450.0
pr = d["prediction"]
assert pr["matrices_by_group"] is True and len(pr["copy_matrix_gbps"]) == 10
print("grouped_json.sh: ok")
PY
