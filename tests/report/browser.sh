#!/usr/bin/env bash
# Opens an HTML report page (`gpurig report --html`) in a real browser,
# Debian's Chromium, headless, and checks what a reader would get:
#   csp         the page carries the report's Content-Security-Policy, exactly,
#               and no <script>
#   console     loading it prints nothing to the browser console (a CSP
#               violation, a blocked image, a script error are all messages;
#               the page has no script, so every message is a fault)
#   network     it asks for nothing over the network (Chromium's net log:
#               every URL request the page made, navigations away included,
#               which no CSP can forbid; file: and data: never reach it). Both
#               runs give the page 5 s of virtual time, so a timer such as a
#               meta refresh fires before the browser stops
#   screenshot  a PNG of the rendered page, WIDTHxHEIGHT, kept as an artifact
#   measure     a test copy of the page (its CSP opened to inline script, in the
#               copy only) runs measure.js, which writes its findings as JSON
#               into the DOM; chromium --dump-dom hands them back
#   diagram     at least one svg.gr-diagram with text.label labels, none empty
#   gpus        the expected GPUs, exactly, as diagram nodes
#               (g.node.gpu[data-gpu]) and as rows outside the diagram
#   overlap     no two diagram labels' boxes intersect by more than 0.5 px
#   clip        no label reaches more than 0.5 px outside its diagram's box
# or, for a fleet's page (`gpurig fleet --html`, EXPECTED nodes=...), in their
# place:
#   nodes       the expected nodes, exactly, each one table row (tr[data-node])
#   odd         the rows with a value marked odd (td.odd) are the expected
#               ones, and every marked cell is drawn unlike its row's plain
#               cells (another background), so a reader sees it
#   processes   no browser process is left behind: each run's processes
#               (those with its throwaway profile on their command line) have
#               GPURIG_BROWSER_GRACE s to exit after the browser returned
# One line per check, then a summary line. Exit 0 all passed, 1 a check
# failed, 3 could not run (no chromium, a browser run that timed out or
# failed). Bounded in time (timeout on every browser run) and nothing leaves
# the machine: every host name resolves to nothing and every proxied request
# goes to a dead loopback port; the browser's own background requests are
# reported apart from the page's and never fail the page.
# usage: browser.sh PAGE.html EXPECTED_GPUS OUT.png
#   EXPECTED_GPUS: a count N (GPU0 .. GPU<N-1>) or a comma list of data-gpu values;
#   or, for a fleet's page, nodes=A,B,C[;odd=C]: the data-node values, and those
#   of the rows with an odd value
# env: GPURIG_CHROMIUM (the browser binary), GPURIG_BROWSER_TIMEOUT (s, default 60),
#      GPURIG_BROWSER_GRACE (s a run's processes have to exit after it, default 10)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 3 ]; then
  echo "usage: browser.sh PAGE.html EXPECTED_GPUS OUT.png" >&2
  exit 2
fi
page=$1 expected_arg=$2 png=$3
CSP="default-src 'none'; style-src 'unsafe-inline'; img-src data:"
WIDTH=1400 HEIGHT=2400
limit_s=${GPURIG_BROWSER_TIMEOUT:-60}
grace_s=${GPURIG_BROWSER_GRACE:-10}

cannot_run() { echo "browser.sh: cannot run: $*" >&2; exit 3; }
for tool in timeout jq perl pgrep od; do
  command -v "$tool" >/dev/null || cannot_run "$tool is not installed (setup.sh installs it)"
done
browser=${GPURIG_CHROMIUM:-}
if [ -z "$browser" ]; then
  # the browser itself rather than Debian's launcher, whose defaults load
  # extensions and turn on remote ones
  if [ -x /usr/lib/chromium/chromium ]; then browser=/usr/lib/chromium/chromium
  else browser=$(command -v chromium || true); fi
fi
if [ -z "$browser" ] || [ ! -x "$browser" ]; then cannot_run "chromium is not installed (setup.sh installs it)"; fi
if [ ! -f "$page" ] || [ ! -r "$page" ]; then cannot_run "no page $page"; fi

fleet=false
if [[ $expected_arg == nodes=* ]]; then
  fleet=true
  spec=${expected_arg#nodes=}
  IFS=, read -r -a expected <<<"${spec%%;odd=*}"
  odd_spec=""
  [[ $spec == *";odd="* ]] && odd_spec=${spec#*;odd=}
  IFS=, read -r -a expected_odd <<<"$odd_spec"
elif [[ $expected_arg =~ ^[0-9]+$ ]]; then
  expected=()
  for ((i = 0; i < expected_arg; i++)); do expected+=("GPU$i"); done
else
  IFS=, read -r -a expected <<<"$expected_arg"
fi
# GPU names sort by their number (GPU2 before GPU10), in the messages and the comparisons
JQ_VSORT='def vsort: sort_by(capture("^(?<p>.*?)(?<n>[0-9]*)$") | [.p, (if .n == "" then -1 else (.n | tonumber) end)]);'
expected_json=$(printf '%s\n' "${expected[@]}" | jq -R . | jq -sc "$JQ_VSORT"' map(select(. != "")) | vsort')

work=$(mktemp -d)
leftover_pids=()
# shellcheck disable=SC2317 # run by the trap
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
started=$SECONDS
failed=0 checks=0
pass() { checks=$((checks + 1)); echo "PASS $1: $2"; }
fail() { checks=$((checks + 1)); failed=$((failed + 1)); echo "FAIL $1: $2"; }
check() { # name, condition exit status, detail
  if [ "$2" = 0 ]; then pass "$1" "$3"; else fail "$1" "$3"; fi
}

file_url() { # absolute path -> file:// URL (the characters a URL path cannot hold as they are)
  printf 'file://%s' "$(printf '%s' "$1" | sed -e 's/%/%25/g' -e 's/ /%20/g' -e 's/#/%23/g' -e 's/?/%3F/g')"
}

browse() { # name, browser arguments...: one bounded run with a throwaway profile
  local name=$1 profile rc=0 pids=()
  shift
  profile=$(mktemp -d "$work/profile-$name.XXXXXX")
  timeout -k 5 "$limit_s" "$browser" --headless --no-sandbox --disable-gpu \
    --no-first-run --no-default-browser-check --user-data-dir="$profile" \
    --disable-dev-shm-usage --disable-extensions --disable-background-networking \
    --disable-component-update --disable-sync --disable-default-apps \
    --hide-scrollbars --mute-audio --window-size="$WIDTH,$HEIGHT" \
    --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="http://127.0.0.1:1" \
    --enable-logging=stderr --v=0 "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null || rc=$?
  # timeout signals the whole process group. The browser's helpers (zygote,
  # renderer, utility processes) end after the main one, and on a loaded
  # machine that can take seconds: they get grace_s to go, polled every 0.1 s.
  # Anything still running under this profile after that escaped, is ours,
  # and is ended by its id.
  local waited=0
  while mapfile -t pids < <(pgrep -f -- "--user-data-dir=$profile" || true); [ ${#pids[@]} -gt 0 ] &&
    [ $waited -lt $((grace_s * 10)) ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  if [ ${#pids[@]} -gt 0 ]; then
    leftover_pids+=("${pids[@]}")
    echo "browser.sh: chromium ($name) left processes behind, ended: ${pids[*]}" >&2
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  if [ $rc != 0 ]; then
    if [ $rc = 124 ] || [ $rc = 137 ]; then echo "browser.sh: chromium ($name) ran past ${limit_s} s" >&2; fi
    echo "browser.sh: chromium ($name) ended with $rc; its last words:" >&2
    grep -v -e dbus -e ScreenSaver "$work/$name.err" | tail -15 >&2 || true
  fi
  return $rc
}

page_abs=$(cd "$(dirname "$page")" && pwd)/$(basename "$page")
version=$("$browser" --version 2>/dev/null || true)
version=${version%%$'\n'*}
echo "browser.sh: $(basename "$page") in ${version% }, expecting ${#expected[@]} $($fleet && echo nodes || echo GPUs)"

# -- the page as it is: its policy, its console, its requests, its picture
policies=$(perl -0ne 'while (/<meta\b[^>]*http-equiv\s*=\s*["\x27]?content-security-policy[^>]*>/gis) {
  my $m = $&; print "$2\n" if $m =~ /\bcontent\s*=\s*(["\x27])(.*?)\1/is }' "$page_abs")
scripts=$(grep -ci '<script' "$page_abs" || true)
if [ "$policies" != "$CSP" ]; then
  fail csp "the policy is \"${policies//$'\n'/\" + \"}\", not \"$CSP\""
elif [ "$scripts" != 0 ]; then
  fail csp "$scripts line(s) with <script"
else
  pass csp "\"$CSP\", no script"
fi

mkdir -p "$(dirname "$png")"
rm -f "$png"
browse page --virtual-time-budget=5000 --log-net-log="$work/net.json" --screenshot="$png" "$(file_url "$page_abs")" ||
  cannot_run "the browser did not load the page"

console=$(grep -E ':CONSOLE[:(]' "$work/page.err" | sed -E 's/^\[[^]]*:CONSOLE[^]]*\] //' || true)
if [ -z "$console" ]; then
  pass console "no console message"
else
  fail console "$(grep -c . <<<"$console") message(s): $(head -3 <<<"$console" | tr '\n' ' ')"
fi

jq -e '.events | length > 0' "$work/net.json" >/dev/null 2>&1 || cannot_run "the browser's net log is unreadable"
# URL_REQUEST_START_JOB carries every request's URL and initiator: the
# page's have the page's (opaque, "null") origin, the browser's own
# (component updater, time, sign-in) have "not an origin"
requests=$(jq -r '.constants.logEventTypes.URL_REQUEST_START_JOB as $t | [.events[]
  | select(.type == $t and (.params.url? // null) != null) | .params] | group_by(.initiator == "not an origin")
  | map({own: (.[0].initiator == "not an origin"), urls: map(.url)}) | .[]
  | (if .own then "own" else "page" end) + " " + (.urls | map(select(test("^(file|data):") | not)) | join(" "))' "$work/net.json")
page_urls=$(sed -n 's/^page //p' <<<"$requests")
own_count=$(sed -n 's/^own //p' <<<"$requests" | wc -w)
# and proof that nothing left the machine: no TCP connection anywhere but loopback
outside=$(jq -r '[.constants.logEventTypes.TCP_CONNECT_ATTEMPT, .constants.logEventTypes.TCP_CONNECT] as $t
  | [.events[] | select(.type as $x | $t | index($x)) | .params.address? // empty
     | select(test("^(127\\.|\\[::1\\])") | not)] | unique | join(" ")' "$work/net.json")
if [ -n "$outside" ]; then
  fail network "connections left the machine: $outside"
elif [ -n "$page_urls" ]; then
  fail network "the page asked for $(wc -w <<<"$page_urls") URL(s): $(awk '{ for (i = 1; i <= NF && i <= 3; i++) printf "%s ", $i }' <<<"$page_urls")"
else
  pass network "no request from the page (the browser's own $own_count background requests went nowhere)"
fi

png_size=$(od -An -tu1 -j16 -N8 "$png" 2>/dev/null | awk '{ if (NF == 8) print ($1*16777216 + $2*65536 + $3*256 + $4) "x" ($5*16777216 + $6*65536 + $7*256 + $8) }')
if [ "$(od -An -c -j1 -N3 "$png" 2>/dev/null | tr -d ' ')" = PNG ] && [ "$png_size" = "${WIDTH}x$HEIGHT" ]; then
  pass screenshot "$png ($png_size, $(wc -c <"$png") bytes)"
else
  fail screenshot "no ${WIDTH}x$HEIGHT PNG at $png (${png_size:-none})"
fi

# -- a test copy that measures itself: the page's policies replaced by the
# report's own plus inline script, measure.js before </body>
copy=$work/measured.html
MEASURE_JS="$here/measure.js" POLICY="$CSP; script-src 'unsafe-inline'" perl -0pe '
  BEGIN { local $/; open my $f, "<", $ENV{MEASURE_JS} or die "measure.js: $!"; $js = <$f>;
          $meta = qq{<meta http-equiv="Content-Security-Policy" content="$ENV{POLICY}">}; }
  my $csp = qr/<meta\b[^>]*http-equiv\s*=\s*["\x27]?content-security-policy[^>]*>/is;
  if (s/$csp/\x00/) { s/$csp//g; s/\x00/$meta/ }
  elsif (!s/(<head\b[^>]*>)/$1$meta/i) { s/(<html\b[^>]*>)/$1$meta/i or $_ = $meta . $_ }
  s{(</body\s*>)(?!.*</body)}{<script>$js</script>$1}is or $_ .= "<script>$js</script>";
' "$page_abs" >"$copy" || cannot_run "could not make the measuring copy"
browse measure --virtual-time-budget=5000 --dump-dom "$(file_url "$copy")" ||
  cannot_run "the browser did not load the measuring copy"
# the last such <pre>: measure.js appends it to the end of the body
result=$(perl -0ne 'my @r = /<pre id="gr-test-result">(.*?)<\/pre>/sg; print $r[-1] if @r' "$work/measure.out")
if [ -z "$result" ] || ! jq -e 'type == "object"' <<<"$result" >/dev/null 2>&1; then
  fail measure "measure.js wrote no result; console: $(grep -E ':CONSOLE[:(]' "$work/measure.err" | tr '\n' ' ' | cut -c1-300 || true)"
  result='{"unmeasured": true}'
elif [ "$(jq -r '.error // empty' <<<"$result")" != "" ]; then
  fail measure "measure.js: $(jq -r .error <<<"$result")"
else
  pass measure "measure.js result read from the DOM ($(wc -c <<<"$result") bytes)"
fi
echo "$result" >"$work/result.json"
q() { jq -r "$1" "$work/result.json"; }

if $fleet; then
  odd_json=$( ((${#expected_odd[@]})) && printf '%s\n' "${expected_odd[@]}" | jq -R . | jq -sc 'map(select(. != "")) | sort' || echo '[]')
  node_report=$(jq -r --argjson want "$expected_json" '(.node_rows // []) as $rows
    | ($rows | group_by(.) | map(select(length > 1) | .[0])) as $twice
    | [ (if ($rows | unique) != ($want | unique) then "rows " + ($rows | join(",")) else empty end),
        (if $twice != [] then "more than one row for " + ($twice | join(",")) else empty end) ] | join("; ")' "$work/result.json")
  if [ -z "$node_report" ]; then
    pass nodes "${#expected[@]} nodes, one row each: $(jq -r 'join(",")' <<<"$expected_json")"
  else
    fail nodes "expected $(jq -r 'join(",")' <<<"$expected_json"); found $node_report"
  fi
  odd_rows=$(q '.odd_nodes // [] | sort | join(",")') unmarked=$(q '.odd_unmarked // [] | length') nodd=$(q '.odd_cells // 0')
  ok=0; [ "$(q '.odd_nodes // [] | sort')" = "$(jq . <<<"$odd_json")" ] && [ "$unmarked" = 0 ] || ok=1
  check odd $ok "$nodd odd value(s) in the rows of ${odd_rows:-no node} (expected $(jq -r 'if . == [] then "none" else join(",") end' <<<"$odd_json")), $unmarked drawn like a plain cell$( [ "$unmarked" = 0 ] || q '": " + (.odd_unmarked[:3] | join(", "))')"
else
diagrams=$(q '.diagrams // 0') labels=$(q '.labels // 0') empty=$(q '.empty_labels // [] | length')
ok=0; [ "$diagrams" -ge 1 ] && [ "$labels" -ge 1 ] && [ "$empty" = 0 ] || ok=1
check diagram $ok "$diagrams svg.gr-diagram, $labels text.label, $empty empty$( [ "$empty" = 0 ] || q '": " + (.empty_labels[:3] | join(", "))')"

gpu_report=$(jq -r --argjson want "$expected_json" "$JQ_VSORT"'
  def names: map(if . == "" then "(no data-gpu)" else . end) | join(",");
  (.gpu_nodes // []) as $nodes | (.gpu_rows // []) as $rows | (.gpus // []) as $all
  | ($nodes | group_by(.) | map(select(length > 1) | .[0])) as $twice
  | [ (if ($nodes | unique | vsort) != $want then "diagram nodes " + ($nodes | vsort | names) else empty end),
      (if $twice != [] then "drawn twice " + ($twice | names) else empty end),
      (if ($rows | vsort) != $want then "rows " + ($rows | vsort | names) else empty end),
      (if ($all | vsort) != $want then "data-gpu values " + ($all | vsort | names) else empty end) ]
  | join("; ")' "$work/result.json")
if [ -z "$gpu_report" ]; then
  pass gpus "${#expected[@]} GPUs, each a diagram node and a row: $(jq -r 'join(",")' <<<"$expected_json")"
else
  fail gpus "expected $(jq -r 'join(",")' <<<"$expected_json"); found $gpu_report"
fi

# without a measurement (or a label) there is nothing these two could pass on
measured=0; [ "$(q '.unmeasured // false')" = false ] && [ "$labels" -ge 1 ] || measured=1
overlaps=$(q '.overlaps // [] | length')
ok=$measured; [ "$overlaps" = 0 ] || ok=1
check overlap $ok "$( [ "$measured" = 0 ] || echo "nothing measured; ")$overlaps pair(s) of $labels labels overlap$( [ "$overlaps" = 0 ] ||
  q '": " + (.overlaps[:5] | map("\"\(.a)\" and \"\(.b)\" by \(.x_px)x\(.y_px) px") | join(", "))')"

clipped=$(q '.clipped // [] | length')
ok=$measured; [ "$clipped" = 0 ] || ok=1
check clip $ok "$( [ "$measured" = 0 ] || echo "nothing measured; ")$clipped label(s) outside their diagram$( [ "$clipped" = 0 ] ||
  q '": " + (.clipped[:5] | map("\"\(.text)\" at \(.box) in \(.frame)") | join(", "))')"

fi

if [ ${#leftover_pids[@]} = 0 ]; then
  pass processes "no browser process left"
else
  fail processes "${#leftover_pids[@]} browser process(es) outlived their run (ended): ${leftover_pids[*]}"
fi

elapsed=$((SECONDS - started))
if [ $failed = 0 ]; then
  echo "browser.sh: ok, $checks checks passed in ${elapsed} s"
  exit 0
fi
echo "browser.sh: $failed of $checks checks failed (${elapsed} s)"
exit 1
