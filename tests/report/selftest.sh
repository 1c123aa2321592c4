#!/usr/bin/env bash
# browser.sh must pass the good test page and fail each bad one on the check
# made for it, and on no other: tests/report/pages/*.html, each described in
# its first comment. Every case runs all the checks (one line each); the
# screenshots stay in OUT_DIR as artifacts.
# usage: selftest.sh OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: selftest.sh OUT_DIR}
mkdir -p "$out"
CHECKS=10 # csp console network screenshot measure diagram gpus overlap clip processes

# page, expected GPUs, the checks that must fail (sorted; "-" for none)
cases=(
  "good 4 -"
  "good GPU0,GPU1,GPU2,GPU4 gpus"
  "good 5 gpus"
  "overlap 4 overlap"
  "clipped 4 clip"
  "network 4 csp,network"
  "console-error 4 console"
  "script 4 console,csp"
  "refresh 4 clip,diagram,gpus,measure,network,overlap"
)
bad=0 n=0
for c in "${cases[@]}"; do
  read -r page gpus want <<<"$c"
  n=$((n + 1))
  png=$out/selftest-$n-$page.png
  rc=0
  log=$(bash "$here/browser.sh" "$here/pages/$page.html" "$gpus" "$png" 2>&1) || rc=$?
  failed=$(grep '^FAIL ' <<<"$log" | sed -E 's/^FAIL ([a-z]+):.*/\1/' | sort | paste -sd, - || true)
  ran=$(grep -cE '^(PASS|FAIL) ' <<<"$log" || true)
  want_rc=1; [ "$want" = - ] && want_rc=0
  if [ "$rc" = "$want_rc" ] && [ "${failed:--}" = "$want" ] && [ "$ran" = $CHECKS ] && [ -s "$png" ]; then
    echo "ok   $page ($gpus): exit $rc, failed: ${failed:-none}"
  else
    echo "FAIL $page ($gpus): exit $rc (want $want_rc), failed: ${failed:-none} (want $want), $ran of $CHECKS checks ran"
    printf '    %s\n' "${log//$'\n'/$'\n'    }"
    bad=$((bad + 1))
  fi
done
[ $bad = 0 ] || { echo "selftest.sh: $bad of $n cases wrong"; exit 1; }
echo "selftest.sh: ok, $n cases"
