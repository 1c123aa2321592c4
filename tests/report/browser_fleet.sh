#!/usr/bin/env bash
# gpurig fleet --html in a real browser (browser.sh, headless Chromium,
# nothing leaves the machine): the page of three nodes' doctor reports, two
# of doctor-healthy and one of doctor-riser-x8, keeps the report's CSP, says
# nothing on the console, asks for nothing, has each node's row once, and
# marks the riser node's odd value (its GPU1 at x8) visibly, on that row only.
# The page and its screenshot stay in OUT_DIR as artifacts.
# usage: browser_fleet.sh GPURIG OUT_DIR   (env: GPURIG_DATA)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpurig=$1 out=$2
trees=$here/../data/trees
mkdir -p "$out/fleet"
rm -f "$out"/fleet/*.json
for n in node01:doctor-healthy node02:doctor-healthy node03:doctor-riser-x8; do
  rc=0
  "$gpurig" doctor --json --root "$trees/${n#*:}" >"$out/fleet/${n%%:*}.json" || rc=$?
  [ $rc -le 2 ] || { echo "browser_fleet.sh: gpurig doctor on ${n#*:} exited $rc" >&2; exit 3; }
done
page=$out/fleet.html
rm -f "$page"
rc=0
"$gpurig" fleet --html "$page" "$out/fleet" || rc=$?
# 1: node03 differs, a warning; the page is written
if [ $rc != 1 ] || [ ! -s "$page" ]; then
  echo "FAIL: gpurig fleet --html exited $rc (want 1)$( [ -s "$page" ] || echo ', no page')"
  exit 1
fi
echo "== gpurig fleet --html over 3 nodes (exit $rc, $(wc -c <"$page") bytes)"
bash "$here/browser.sh" "$page" "nodes=node01,node02,node03;odd=node03" "$out/fleet.png"
