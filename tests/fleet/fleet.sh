#!/usr/bin/env bash
# gpurig fleet over doctor reports of gathered fixture trees (docs/fleet.md):
# two healthy nodes and one whose GPU1 trains at x8 on a riser; then a node
# that did not answer, a node whose GPU is off the bus, a node on another
# driver, and the JSON. Each check says what it means; no timing.
# usage: tests/fleet/fleet.sh GPURIG
set -uo pipefail
gpurig=$1
here=$(cd "$(dirname "$0")" && pwd)
trees=$here/../data/trees
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { # what, pattern, text
  grep -qF -- "$2" <<<"$3" || fail "$1: no '$2' in:"$'\n'"$3"
}

doctor() { "$gpurig" doctor --json --root "$trees/$1" >"$2"; [ $? -le 2 ] || fail "doctor on $1"; }
mkdir "$work/a"
doctor doctor-healthy "$work/a/node01.json"
doctor doctor-healthy "$work/a/node02.json"
doctor doctor-riser-x8 "$work/a/node03.json"

# 1. the odd node and its x8 GPU, exit 1 (a warning)
out=$("$gpurig" fleet "$work/a"); rc=$?
[ $rc = 1 ] || fail "riser node: exit $rc, want 1"
expect "riser node" "node03 GPU1 0000:02:00.0: link Gen4 x8, the 2 others Gen4 x16" "$out"
expect "riser node's row" "node03           differs" "$out"
grep -q "node01  *differs" <<<"$out" && fail "node01 marked as differing"
# the same from files named one by one
out2=$("$gpurig" fleet "$work/a/node01.json" "$work/a/node02.json" "$work/a/node03.json")
[ "$out" = "$out2" ] || fail "files one by one differ from the directory"

# 2. all alike: exit 0
out=$("$gpurig" fleet "$work/a/node01.json" "$work/a/node02.json"); rc=$?
[ $rc = 0 ] || fail "two healthy nodes: exit $rc, want 0"
expect "healthy pair" "Every node is like the others" "$out"

# 3. a GPU off the bus on one node: a failure naming the address, exit 2
mkdir "$work/b"
cp "$work/a/node01.json" "$work/a/node02.json" "$work/b/"
jq '.inventory.gpus |= map(select(.pci_bus_id != "0000:42:00.0"))' "$work/a/node01.json" >"$work/b/node09.json"
out=$("$gpurig" fleet "$work/b"); rc=$?
[ $rc = 2 ] || fail "missing GPU: exit $rc, want 2"
expect "missing GPU" "node09: no GPU at 0000:42:00.0, where 2 of the 2 others have GPU3 0000:42:00.0" "$out"

# 4. a report that is not JSON, and one that is not a doctor report: nodes that did not answer
printf '{"hostname": "x", ' >"$work/b/node10.json"
printf '{"nodes": []}' >"$work/b/node11.json"
out=$("$gpurig" fleet "$work/b"); rc=$?
[ $rc = 2 ] || fail "silent nodes: exit $rc, want 2"
expect "truncated report" "node10: no report: $work/b/node10.json: line" "$out"
expect "foreign JSON" "node11: no report: $work/b/node11.json: not a doctor report" "$out"
expect "silent row" "node10           silent" "$out"

# 5. another driver on one node
mkdir "$work/c"
cp "$work/a/node01.json" "$work/a/node02.json" "$work/c/"
doctor doctor-driver-545 "$work/c/node05.json"
out=$("$gpurig" fleet "$work/c"); rc=$?
[ $rc = 1 ] || fail "driver node: exit $rc, want 1"
expect "driver node" "node05: driver 545.29.06, the 2 others 535.129.03" "$out"

# 6. JSON: numbers as numbers, the finding's subject, the majority
js=$("$gpurig" fleet --json "$work/a")
[ "$(jq -r '.exit_status' <<<"$js")" = 1 ] || fail "json exit_status"
[ "$(jq -r '[.findings[] | select(.id == "fleet.differs")][0].subject' <<<"$js")" = "node03 GPU1 0000:02:00.0" ] ||
  fail "json finding subject"
[ "$(jq -r '.majority[] | select(.what == "GPUs") | .value' <<<"$js")" = 4 ] || fail "json majority GPUs"
[ "$(jq -r '.nodes[2].differs' <<<"$js")" = true ] || fail "json node03 differs"
[ "$(jq -r '.nodes[0].gpus | type' <<<"$js")" = number ] || fail "json gpus is a number"

# 7. bad input: no node, a path that is not there
"$gpurig" fleet >/dev/null 2>&1; [ $? = 2 ] || fail "no argument: want exit 2"
err=$("$gpurig" fleet "$work/nothere" 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "missing path: exit $rc, want 2"
expect "missing path" "$work/nothere: No such file or directory" "$err"
mkdir "$work/empty"
err=$("$gpurig" fleet "$work/empty" 2>&1 >/dev/null); [ $? = 2 ] || fail "empty directory: want exit 2"
expect "empty directory" "no *.json file" "$err"

[ $fails = 0 ] && echo "fleet: all checks passed" || { echo "fleet: $fails check(s) failed"; exit 1; }
