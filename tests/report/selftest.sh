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
FLEET_CHECKS=8 # a fleet's page (nodes=...): csp console network screenshot measure nodes odd processes

# Browsers that leave a process of their run behind: wrappers that start one
# (perl sleeping, its command line naming the run's profile as chromium's
# helpers do) and then run the real browser. One's process ends 1 s after the
# browser did, as a helper on a loaded machine can: the processes check waits
# for it and passes. The other's outlives the browser by 120 s: the check must
# fail it after its grace (2 s here, 10 s by default) and end it.
real=${GPURIG_CHROMIUM:-}
if [ -z "$real" ]; then
  if [ -x /usr/lib/chromium/chromium ]; then real=/usr/lib/chromium/chromium; else real=$(command -v chromium || true); fi
fi
for b in slow-exit:1 lingering:120; do
  cat >"$out/${b%:*}-browser.sh" <<WRAP
#!/usr/bin/env bash
for a; do case \$a in --user-data-dir=*) perl -e '\$p = getppid(); select(undef, undef, undef, 0.05) while getppid() == \$p; sleep ${b#*:}' -- "\$a" </dev/null >/dev/null 2>&1 & ;; esac; done
exec "$real" "\$@"
WRAP
  chmod +x "$out/${b%:*}-browser.sh"
done

# page, expected GPUs, the checks that must fail (sorted; "-" for none),
# and optionally which of the browsers above runs it
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
  "good 4 - slow-exit"
  "good 4 processes lingering"
  "fleet-good nodes=n1,n2,n3;odd=n3 -"
  "fleet-good nodes=n1,n2;odd=n3 nodes"
  "fleet-good nodes=n1,n2,n3;odd=n2 odd"
  "fleet-unmarked nodes=n1,n2,n3;odd=n3 odd"
  "good nodes=n1,n2,n3;odd=n3 nodes,odd"
)
bad=0 n=0
for c in "${cases[@]}"; do
  read -r page gpus want browser <<<"$c"
  n=$((n + 1))
  png=$out/selftest-$n-$page.png
  rc=0
  envs=()
  [ -n "${browser:-}" ] && envs=(GPURIG_CHROMIUM="$out/$browser-browser.sh" GPURIG_BROWSER_GRACE=2)
  log=$(env "${envs[@]}" bash "$here/browser.sh" "$here/pages/$page.html" "$gpus" "$png" 2>&1) || rc=$?
  failed=$(grep '^FAIL ' <<<"$log" | sed -E 's/^FAIL ([a-z]+):.*/\1/' | sort | paste -sd, - || true)
  ran=$(grep -cE '^(PASS|FAIL) ' <<<"$log" || true)
  want_rc=1; [ "$want" = - ] && want_rc=0
  checks=$CHECKS; [[ $gpus == nodes=* ]] && checks=$FLEET_CHECKS
  if [ "$rc" = "$want_rc" ] && [ "${failed:--}" = "$want" ] && [ "$ran" = "$checks" ] && [ -s "$png" ]; then
    echo "ok   $page ($gpus${browser:+, $browser browser}): exit $rc, failed: ${failed:-none}"
  else
    echo "FAIL $page ($gpus): exit $rc (want $want_rc), failed: ${failed:-none} (want $want), $ran of $checks checks ran"
    printf '    %s\n' "${log//$'\n'/$'\n'    }"
    bad=$((bad + 1))
  fi
done
[ $bad = 0 ] || { echo "selftest.sh: $bad of $n cases wrong"; exit 1; }
echo "selftest.sh: ok, $n cases"
