#!/usr/bin/env bash
# gpurig fleet over doctor reports of gathered fixture trees (docs/fleet.md):
# two healthy nodes and one whose GPU1 trains at x8 on a riser; then a node
# that did not answer, a node whose GPU is off the bus, a node on another
# driver, and the JSON; then NCCL, IOMMU, AER and Xid facts. Each check says what it means; no timing.
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

# the stand-in libraries answer for CUDA and NCCL (12.4, 2.21.5; scenario
# nccl-2.18: 2.18.5), so the reports do not depend on this machine's. doctor
# asks them only of a tree gathered here: each tree is copied and named after
# this host, as hwloc-gather-topology would name it here.
here_tree() {
  [ -d "$work/trees/$1" ] && return
  mkdir -p "$work/trees" && cp -a "$trees/$1" "$work/trees/$1" &&
    sed -i "s/^HostName: .*/HostName: $(hostname)/" "$work/trees/$1/proc/hwloc-nofile-info"
}
doctor() {
  here_tree "$1"
  # (their GPUs are not the tree's: doctor's warning about NVLink goes aside)
  GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB "$gpurig" doctor --json --root "$work/trees/$1" >"$2" 2>"$work/doctor.err"
  [ $? -le 2 ] || fail "doctor on $1: $(cat "$work/doctor.err")"
}
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

# 7. --html: the HTML report's page (xmllint's HTML parser and well-formed XML,
# its CSP, nothing that could fetch), a row per node, the odd values marked on
# the odd nodes only, the findings; the same bytes twice; input text escaped
svg_tags='svg|g|rect|line|text|tspan|title'
page=$work/fleet.html
"$gpurig" fleet --html "$page" "$work/a" >"$work/html.out"; rc=$?
[ $rc = 1 ] || fail "--html: exit $rc, want the fleet's 1"
[ -s "$work/html.out" ] && fail "--html printed to standard output: $(head -c 200 "$work/html.out")"
[ "$(head -n1 "$page")" = '<!DOCTYPE html>' ] || fail "--html: the first line is not <!DOCTYPE html>"
grep -qF "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"/>" "$page" ||
  fail "--html: no Content-Security-Policy"
errs=$(xmllint --html --noout "$page" 2>&1 | grep 'parser error' | grep -vE "Tag ($svg_tags) invalid" || true)
[ -z "$errs" ] || fail "--html: xmllint --html: $(head -3 <<<"$errs")"
xmllint --noout "$page" 2>"$work/xml.err" || fail "--html: not well-formed: $(head -3 "$work/xml.err")"
grep -qiE 'https?:|src=|<script|<link|<img|<iframe|url\(|@import' "$page" && fail "--html: something that could fetch"
for n in node01 node02 node03; do
  [ "$(grep -c "<tr data-node=\"$n\">" "$page")" = 1 ] || fail "--html: $n's row is not there once"
done
odd() { grep "<tr data-node=\"$1\">" "$page" | grep -o '<td class="odd">[^<]*</td>' | paste -sd' ' -; }
[ "$(odd node03)" = '<td class="odd">Gen4 x8</td>' ] || fail "--html: node03's odd cells are '$(odd node03)', want its x8 link only"
[ -z "$(odd node01)$(odd node02)" ] || fail "--html: a healthy node has an odd cell: $(odd node01) $(odd node02)"
expect "--html finding" "<td>node03 GPU1 0000:02:00.0: link Gen4 x8, the 2 others Gen4 x16</td>" "$(cat "$page")"
expect "--html finding's id" '<td class="id">fleet.differs</td>' "$(cat "$page")"
for id in nodes majority findings; do grep -q "<h2 id=\"$id\">" "$page" || fail "--html: no section $id"; done
"$gpurig" fleet --html - "$work/a" >"$work/again.html"
cmp -s "$page" "$work/again.html" || fail "--html - differs from --html FILE (or from one run to the next)"
# a host name and a report that bring markup: escaped, the page still well-formed
mkdir "$work/e"
cp "$work/a/node01.json" "$work/a/node02.json" "$work/e/"
jq '.hostname = "<b>n&3\"</b>" | .inventory.gpus[0].model = "<i>GPU</i>"' "$work/a/node03.json" >"$work/e/node03.json"
"$gpurig" fleet --html "$work/e.html" "$work/e"
xmllint --noout "$work/e.html" 2>"$work/xml.err" || fail "--html with markup in a report: not well-formed: $(head -3 "$work/xml.err")"
grep -qF '<tr data-node="&lt;b&gt;n&amp;3&quot;&lt;/b&gt;">' "$work/e.html" || fail "--html: the host name is not escaped in its row"
grep -qF '<td class="odd">&lt;i&gt;GPU&lt;/i&gt;</td>' "$work/e.html" || fail "--html: the GPU's name is not escaped, or not marked odd"
grep -q '<b>\|<i>' "$work/e.html" && fail "--html: markup from a report reached the page"
# silent nodes: their rows say why, a failure
"$gpurig" fleet --html "$work/b.html" "$work/b"; rc=$?
[ $rc = 2 ] || fail "--html with silent nodes: exit $rc, want 2"
grep -q '<tr data-node="node10"><td class="id">node10</td><td class="sev-fail">no report: ' "$work/b.html" ||
  fail "--html: the silent node10's row does not say so"
# refused: with --json, and a file that cannot be written (before any node is read)
err=$("$gpurig" fleet --json --html "$work/x.html" "$work/a" 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "--json --html: exit $rc, want 2"
expect "--json --html" "exclude each other" "$err"
err=$("$gpurig" fleet --html "$work/nodir/x.html" "$work/a" 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || [ $rc = 3 ] || fail "--html into a missing directory: exit $rc, want 2 or 3"
expect "--html into a missing directory" "$work/nodir" "$err"
[ -e "$work/x.html" ] && fail "--json --html wrote the page"

# 8. facts beyond the links (issue 33): NCCL, IOMMU, AER, Xid, each against
# the majority; unknown is no value to differ by; error counts only where the
# majority has none
mkdir "$work/f"
cp "$work/a/node01.json" "$work/a/node02.json" "$work/f/"
[ "$(jq -c '.inventory | [.cuda.version, .nccl.version, .iommu, .acs_redirecting, .gpus[0].aer.correctable, .gpus[0].xids]' \
  "$work/a/node01.json")" = '["12.4","2.21.5","passthrough",0,0,0]' ] ||
  fail "doctor's inventory: $(jq -c '.inventory | del(.gpus, .nics)' "$work/a/node01.json")"
GPURIG_STUB_SCENARIO=nccl-2.18 doctor doctor-healthy "$work/f/node03.json"
# no libraries here: absent, not unknown
GPURIG_DRIVER_DIR=/nonexistent/gpurig-tests "$gpurig" doctor --json --root "$work/trees/doctor-healthy" 2>/dev/null \
  >"$work/nolib.json"
[ "$(jq -c '.inventory | [.cuda, .nccl]' "$work/nolib.json")" = '[{"present":false,"version":null},{"present":false,"version":null}]' ] ||
  fail "no libraries: $(jq -c '.inventory | [.cuda, .nccl]' "$work/nolib.json")"
# a tree gathered elsewhere: this machine's libraries are not its, so unknown
GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB "$gpurig" doctor --json --root "$trees/doctor-healthy" 2>/dev/null >"$work/elsewhere.json"
[ "$(jq -c '.inventory | [.cuda.present, .nccl.present]' "$work/elsewhere.json")" = '[null,null]' ] ||
  fail "a tree from elsewhere got this machine's CUDA and NCCL: $(jq -c '.inventory | [.cuda, .nccl]' "$work/elsewhere.json")"
out=$("$gpurig" fleet "$work/f"); rc=$?
[ $rc = 1 ] || fail "NCCL node: exit $rc, want 1"
expect "NCCL node" "warn  node03: NCCL 2.18.5, the 2 others 2.21.5" "$out"
expect "NCCL node's fix" "fix: Install the NCCL the other nodes have" "$out"
grep -q "node03  *differs .* 12\.4  *2\.18\.5  *passthrough  *0  *0  *ok" <<<"$out" || fail "NCCL node's row: $out"
expect "majority NCCL" "NCCL 2.21.5 (2 of 3)" "$out"
page=$work/f.html
"$gpurig" fleet --html "$page" "$work/f"
[ "$(odd node03)" = '<td class="odd">2.18.5</td>' ] || fail "--html: node03's odd cells are '$(odd node03)', want NCCL"
js=$("$gpurig" fleet --json "$work/f")
[ "$(jq -r '.majority[] | select(.what == "NCCL") | .value' <<<"$js")" = 2.21.5 ] || fail "json majority NCCL"
[ "$(jq -r '.nodes[2].facts[] | select(.what == "NCCL") | .value' <<<"$js")" = 2.18.5 ] || fail "json node03 NCCL"

rm "$work/f/node03.json"
doctor doctor-iommu-translated "$work/f/node04.json"
doctor doctor-aer-rootport "$work/f/node05.json"
out=$("$gpurig" fleet "$work/f"); rc=$?
[ $rc = 1 ] || fail "IOMMU and AER nodes: exit $rc, want 1"
expect "IOMMU node" "warn  node04: IOMMU translated, the 3 others passthrough" "$out"
expect "AER node" "warn  node05 GPU3 0000:42:00.0: 5000 AER correctable errors, the 3 others 0" "$out"
grep -q "node05  *differs .* passthrough  *5000  *0  *1 warn" <<<"$out" || fail "AER node's row: $out"
grep -q "node04 GPU\|node05: IOMMU\|node01 GPU.*AER\|node04.*AER correctable" <<<"$out" && fail "a fact found on the wrong node: $out"

# counts where the majority has some too are noise: no finding; a fatal one
# where the majority has none is a failure; Xids as AER
mkdir "$work/g"
for n in 1 2 3; do
  jq ".inventory.gpus[0].aer.correctable = $((n * 3))" "$work/a/node01.json" >"$work/g/node0$n.json"
done
out=$("$gpurig" fleet "$work/g"); rc=$?
[ $rc = 0 ] || fail "correctable counts 3, 6, 9: exit $rc, want 0 (noise): $out"
jq '.inventory.gpus[1].aer.fatal = 1 | .inventory.gpus[2].xids = 3' "$work/g/node03.json" >"$work/g/node04.json"
out=$("$gpurig" fleet "$work/g"); rc=$?
[ $rc = 2 ] || fail "a fatal AER: exit $rc, want 2"
expect "fatal AER" "fail  node04 GPU1 0000:02:00.0: 1 AER fatal error, the 3 others 0" "$out"
expect "Xids" "warn  node04 GPU2 0000:41:00.0: 3 Xid events, the 3 others 0" "$out"

# unknown (a description, or an older report without the facts) against
# known: no finding, shown as unknown; absent NCCL against present: a warning
mkdir "$work/h"
cp "$work/a/node01.json" "$work/a/node02.json" "$work/h/"
jq '.inventory.nccl.present = null | .inventory.nccl.version = null | del(.inventory.cuda, .inventory.iommu)
    | .inventory.gpus |= map(del(.aer, .xids))' "$work/a/node01.json" >"$work/h/node06.json"
out=$("$gpurig" fleet "$work/h"); rc=$?
[ $rc = 0 ] || fail "unknown facts: exit $rc, want 0: $out"
grep -q "node06  *4 .*unknown  *unknown  *unknown  *-  *-  *ok" <<<"$out" || fail "unknown facts' row: $out"
# nodes that cannot tell do not outvote those that can: three unknown, two on 2.21.5, one on 2.18.5
jq '.inventory.nccl.present = null | .inventory.nccl.version = null' "$work/a/node01.json" >"$work/h/node07.json"
cp "$work/h/node07.json" "$work/h/node08.json"
jq '.inventory.nccl.version = "2.18.5"' "$work/a/node01.json" >"$work/h/node09.json"
out=$("$gpurig" fleet "$work/h"); rc=$?
[ $rc = 1 ] || fail "NCCL among unknowns: exit $rc, want 1"
expect "NCCL among unknowns" "warn  node09: NCCL 2.18.5, 2 others 2.21.5" "$out"
expect "NCCL majority among unknowns" "NCCL 2.21.5 (2 of 6)" "$out"
rm "$work/h/node07.json" "$work/h/node08.json" "$work/h/node09.json"
jq '.inventory.nccl.present = false | .inventory.nccl.version = null' "$work/a/node01.json" >"$work/h/node06.json"
out=$("$gpurig" fleet "$work/h"); rc=$?
[ $rc = 1 ] || fail "NCCL absent: exit $rc, want 1"
expect "NCCL absent" "warn  node06: no NCCL, the 2 others 2.21.5" "$out"
jq '.inventory.gpus[0].aer.fatal = -1' "$work/a/node01.json" >"$work/h/node06.json"
out=$("$gpurig" fleet "$work/h")
expect "negative count" "node06: no report: $work/h/node06.json: inventory: GPU 0: aer.fatal is not a" "$out"

# 10. AMD nodes (issue 35): HIP and RCCL from the stand-ins (HIP 6.0.32830 with
# its driver version, RCCL 2.18.3; scenario tinybox-red-rccl-2.20: 2.20.5),
# asked only where the machine has AMD GPUs; a node on another RCCL is a
# warning as NCCL's is; their columns only where a node knows them
amd_doctor() { # scenario, output
  here_tree tinybox-red
  GPURIG_STUB_SCENARIO=$1 GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB "$gpurig" doctor --json \
    --root "$work/trees/tinybox-red" >"$2" 2>"$work/doctor.err"
  [ $? -le 2 ] || fail "doctor on tinybox-red ($1): $(cat "$work/doctor.err")"
}
mkdir "$work/r"
amd_doctor tinybox-red "$work/r/red01.json"
[ "$(jq -c '.inventory | [.hip, .rccl]' "$work/r/red01.json")" = \
  '[{"present":true,"version":"6.0.32830","driver_version":"6.0.32830"},{"present":true,"version":"2.18.3"}]' ] ||
  fail "AMD inventory: $(jq -c '.inventory | [.hip, .rccl]' "$work/r/red01.json")"
amd_doctor tinybox-red "$work/r/red02.json"
amd_doctor tinybox-red-rccl-2.20 "$work/r/red03.json"
for n in 1 2 3; do jq ".hostname = \"red0$n\"" "$work/r/red0$n.json" >"$work/r/x" && mv "$work/r/x" "$work/r/red0$n.json"; done
# no NVIDIA GPU in the tree, yet CUDA and NCCL are asked as before (the stand-ins answer)
[ "$(jq -c '.inventory | [.cuda.version, .nccl.version]' "$work/r/red03.json")" = '["12.4","2.21.5"]' ] ||
  fail "AMD node's CUDA and NCCL: $(jq -c '.inventory | [.cuda, .nccl]' "$work/r/red03.json")"
out=$("$gpurig" fleet "$work/r"); rc=$?
[ $rc = 1 ] || fail "RCCL node: exit $rc, want 1: $out"
expect "RCCL node" "warn  red03: RCCL 2.20.5, the 2 others 2.18.3" "$out"
expect "RCCL node's fix" "fix: Install the RCCL the other nodes have" "$out"
expect "AMD columns" "CUDA   NCCL     HIP        RCCL     IOMMU" "$out"
grep -q "red03  *differs .* 12\.4  *2\.21\.5  *6\.0\.32830  *2\.20\.5  *off" <<<"$out" || fail "RCCL node's row: $out"
expect "majority HIP" "HIP 6.0.32830 (3 of 3)" "$out"
grep -q "HIP" <<<"$("$gpurig" fleet "$work/f")" && fail "NVIDIA nodes got HIP columns or facts"
# NVIDIA GPUs only: HIP and RCCL are not asked, unknown
[ "$(jq -c '.inventory | [.hip.present, .rccl.present]' "$work/a/node01.json")" = '[null,null]' ] ||
  fail "an NVIDIA node asked HIP: $(jq -c '.inventory | [.hip, .rccl]' "$work/a/node01.json")"
# a tree gathered elsewhere: not this machine's HIP either
GPURIG_STUB_SCENARIO=tinybox-red GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB "$gpurig" doctor --json \
  --root "$trees/tinybox-red" 2>/dev/null >"$work/red-elsewhere.json"
[ "$(jq -c '.inventory | [.hip.present, .rccl.present]' "$work/red-elsewhere.json")" = '[null,null]' ] ||
  fail "a tree from elsewhere got this machine's HIP and RCCL: $(jq -c '.inventory | [.hip, .rccl]' "$work/red-elsewhere.json")"
# no libraries: absent
GPURIG_DRIVER_DIR=/nonexistent/gpurig-tests GPURIG_STUB_SCENARIO=tinybox-red "$gpurig" doctor --json \
  --root "$work/trees/tinybox-red" 2>/dev/null >"$work/red-nolib.json"
[ "$(jq -c '.inventory | [.hip, .rccl]' "$work/red-nolib.json")" = \
  '[{"present":false,"version":null,"driver_version":null},{"present":false,"version":null}]' ] ||
  fail "AMD node without libraries: $(jq -c '.inventory | [.hip, .rccl]' "$work/red-nolib.json")"
# RCCL absent on one node of four: a warning; the JSON's facts
jq '.hostname = "red04"' "$work/r/red01.json" >"$work/r/red04.json"
jq '.inventory.rccl = {"present": false, "version": null}' "$work/r/red02.json" >"$work/r/red02.json.x" &&
  mv "$work/r/red02.json.x" "$work/r/red02.json"
out=$("$gpurig" fleet "$work/r")
expect "RCCL absent" "warn  red02: no RCCL, 2 others 2.18.3" "$out"
expect "RCCL against two" "warn  red03: RCCL 2.20.5, 2 others 2.18.3" "$out"
js=$("$gpurig" fleet --json "$work/r")
[ "$(jq -r '.nodes[2].facts[] | select(.what == "RCCL") | .value' <<<"$js")" = 2.20.5 ] || fail "json red03 RCCL"
[ "$(jq -r '.nodes[1].facts[] | select(.what == "RCCL") | .value' <<<"$js")" = none ] || fail "json red02 RCCL"
[ "$(jq -r '.nodes[0].facts[] | select(.what == "HIP") | .value' <<<"$js")" = 6.0.32830 ] || fail "json red01 HIP"

# 9. bad input: no node, a path that is not there
"$gpurig" fleet >/dev/null 2>&1; [ $? = 2 ] || fail "no argument: want exit 2"
err=$("$gpurig" fleet "$work/nothere" 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "missing path: exit $rc, want 2"
expect "missing path" "$work/nothere: No such file or directory" "$err"
mkdir "$work/empty"
err=$("$gpurig" fleet "$work/empty" 2>&1 >/dev/null); [ $? = 2 ] || fail "empty directory: want exit 2"
expect "empty directory" "no *.json file" "$err"

[ $fails = 0 ] && echo "fleet: all checks passed" || { echo "fleet: $fails check(s) failed"; exit 1; }
