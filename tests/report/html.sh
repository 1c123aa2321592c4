#!/usr/bin/env bash
# gpurig report --html and --markdown: pages for the DGX-2 and p5en XML, a rig
# (wopr) and the epyc-riser tree with bench and burn results taken from the
# stand-in driver are valid HTML (xmllint's HTML parser, and well-formed XML),
# hold every GPU's row once, fetch nothing, come out the same twice; input
# text is escaped; bad --bench and --burn files are refused with one line.
# usage: html.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -eu
gpurig=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$GPURIG_TEST_DATA
fails=0
fail() { echo "html.sh: FAIL: $*" >&2; fails=$((fails + 1)); }

# The elements xmllint's HTML 4 parser does not know but HTML5 has inline: SVG's.
svg_tags='svg|g|rect|line|text|tspan|title|desc|polyline|polygon|circle|ellipse|path|defs|marker|use|clipPath|linearGradient|stop|style'

check_page() { # file, gpus, what
  local f=$1 n=$2 what=$3 errs
  [ -s "$f" ] || { fail "$what: no page"; return; }
  [ "$(head -n1 "$f")" = '<!DOCTYPE html>' ] || fail "$what: the first line is not <!DOCTYPE html>"
  grep -qF "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"/>" "$f" ||
    fail "$what: no Content-Security-Policy"
  errs=$(xmllint --html --noout "$f" 2>&1 | grep 'parser error' | grep -vE "Tag ($svg_tags) invalid" || true)
  [ -z "$errs" ] || fail "$what: xmllint --html: $(echo "$errs" | head -3)"
  xmllint --noout "$f" 2>"$work/xml.err" || fail "$what: not well-formed: $(head -3 "$work/xml.err")"
  # each GPU once in the GPU table and, where the page has the diagram, once as its node there
  rows=$(grep -o '<tr data-gpu="GPU[0-9]*"' "$f" | wc -l)
  nodes=$(grep -o '<g class="node gpu[^"]*" data-gpu="GPU[0-9]*"' "$f" | wc -l)
  [ "$rows" = "$n" ] || fail "$what: $rows GPU rows, expected $n"
  [ "$nodes" = "$n" ] || fail "$what: $nodes GPU nodes in the diagram, expected $n"
  for ((g = 0; g < n; g++)); do
    [ "$(grep -c "<tr data-gpu=\"GPU$g\">" "$f")" = 1 ] || fail "$what: GPU$g's row is not there once"
  done
  if grep -qiE 'https?:|src=|<script|<link|<img|<iframe|url\(|@import' "$f"; then
    fail "$what: something that could fetch: $(grep -oiE '.{20}(https?:|src=|<script|<link|<img|<iframe|url\(|@import).{20}' "$f" | head -2)"
  fi
  # the sections, in order
  local last=0 at
  for id in summary diagram gpus matrices hives predictions verdicts findings bench burn; do
    at=$(grep -n "<h2 id=\"$id\">" "$f" | cut -d: -f1)
    [ -n "$at" ] && [ "$at" -gt "$last" ] || { fail "$what: section $id missing or out of order"; continue; }
    last=$at
  done
}

report() { # want-exit, args...
  local want=$1 rc=0
  shift
  "$gpurig" report "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" = "$want" ] || fail "report $*: exit $rc, expected $want: $(head -c 300 "$work/err")"
}

# bench and burn results from the stand-in driver on a copy of the epyc-riser tree
cp -a "$data/trees/epyc-riser" "$work/t"
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB
unset GPURIG_STUB_SCENARIO GPURIG_STUB_SCENARIO_FILE
"$gpurig" bench --json --quick --size 1M --allreduce-max 4M --root "$work/t" >"$work/bench.json" 2>/dev/null || true
GPURIG_STUB_SCENARIO=burn-throttle GPURIG_STUB_TREE=$work/t "$gpurig" burn --json --duration 2 --size 1M --interval 0.25 \
  --root "$work/t" >"$work/burn.json" 2>/dev/null || true
jq -e '.results | length > 4' "$work/bench.json" >/dev/null || fail "no bench results to draw"
jq -e '.gpus | length == 4' "$work/burn.json" >/dev/null || fail "no burn results to draw"

report 0 --html "$work/dgx2.html" --input "$data/hwloc/nvidiaDGX2.xml"
check_page "$work/dgx2.html" 16 dgx2
[ ! -s "$work/out" ] || fail "dgx2: --html FILE printed on standard output"
report 0 --html "$work/p5en.html" --input "$data/hwloc-aws/p5en.xml"
check_page "$work/p5en.html" 8 p5en
report 0 --html "$work/wopr.html" --rig wopr --bench "$work/bench.json" --burn "$work/burn.json"
check_page "$work/wopr.html" 7 wopr
grep -qF 'not in this report&#39;s machine' "$work/wopr.html" || fail "wopr: the bench's GPUs from another machine are not noted"
report 1 --html "$work/epyc.html" --markdown "$work/epyc.md" --root "$data/trees/epyc-riser" --bench "$work/bench.json" \
  --burn "$work/burn.json"
check_page "$work/epyc.html" 4 epyc-riser
for want in 'All-reduce bus bandwidth against message size' 'Host &lt;-&gt; GPU: measured median' \
  'Per GPU under load' 'slowed under load' 'pcie.link-width' 'The set-up (gpurig doctor)'; do
  grep -qF "$want" "$work/epyc.html" || fail "epyc-riser: no '$want' in the page"
done
[ "$(grep -c '<svg' "$work/epyc.html")" -ge 5 ] || fail "epyc-riser: $(grep -c '<svg' "$work/epyc.html") charts, expected 5 or more"
grep -q '^| GPU3 | GA102' "$work/epyc.md" || fail "epyc-riser: no GPU3 row in the Markdown"
grep -qF '| GPU1 host -\> GPU (CE) | 1' "$work/epyc.md" || fail "epyc-riser: the bench chart is not a table in the Markdown"

# the same inputs give the same bytes (no date or time in the page)
report 1 --html "$work/again.html" --root "$data/trees/epyc-riser" --bench "$work/bench.json" --burn "$work/burn.json"
cmp -s "$work/epyc.html" "$work/again.html" || fail "two runs gave different pages"
report 0 --html - --rig wopr
cmp -s "$work/out" <("$gpurig" report --html /dev/stdout --rig wopr) || fail "--html - and /dev/stdout differ"
grep -q '^<!DOCTYPE html>' "$work/out" || fail "--html - wrote no page"

# input text is escaped: a rig named with markup, quotes, a pipe and a byte that is not UTF-8
sed "2s/.*/rig \"<script>alert(1)<\/script> \& 'x' | \xff [a](b)\"/" "$GPURIG_DATA/rigs/wopr.rig" >"$work/evil.rig"
report 0 --html "$work/evil.html" --markdown "$work/evil.md" --rig "$work/evil.rig"
grep -qi '<script' "$work/evil.html" && fail "evil rig: <script reached the page"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;x&#39;' "$work/evil.html" || fail "evil rig: the name is not escaped"
xmllint --noout "$work/evil.html" 2>/dev/null || fail "evil rig: the page is not well-formed (a byte that is not UTF-8?)"
grep -qF '# gpurig report: \<script\>alert(1)\</script\> \& '"'x'"' \| � \[a\](b)' "$work/evil.md" ||
  fail "evil rig: the Markdown title is not escaped: $(head -1 "$work/evil.md")"

# bad --bench and --burn files: one line naming the file, exit 2, nothing written
bad() { # what, expected stderr (ERE), args...
  local what=$1 want=$2
  shift 2
  rm -f "$work/bad.html"
  report 2 --html "$work/bad.html" --rig wopr "$@"
  [ "$(wc -l <"$work/err")" = 1 ] && grep -qE -- "$want" "$work/err" || fail "$what: stderr '$(cat "$work/err")', expected '$want'"
  [ ! -e "$work/bad.html" ] || fail "$what: a page was written"
}
printf '{"results": [' >"$work/trunc.json"
echo '{"backend": "cuda"}' >"$work/shape.json"
mkfifo "$work/fifo"
bad missing '^gpurig: --bench .*/nope.json: ' --bench "$work/nope.json"
bad truncated '^gpurig: --bench .*/trunc.json: not JSON \(line 1: ' --bench "$work/trunc.json"
bad shape '^gpurig: --bench .*/shape.json: is not gpurig bench --json output' --bench "$work/shape.json"
bad swapped '^gpurig: --bench .*/burn.json: is gpurig burn --json output, not bench' --bench "$work/burn.json"
bad swapped-burn '^gpurig: --burn .*/bench.json: is gpurig bench --json output, not burn' --burn "$work/bench.json"
bad directory '^gpurig: --bench .*: .*directory' --bench "$work"
bad fifo '^gpurig: --bench .*/fifo: .*FIFO' --bench "$work/fifo"
bad zero '^gpurig: --bench /dev/zero: .*character device' --bench /dev/zero
printf '%.0s[' $(seq 1 5000) >"$work/deep.json"
bad deep '^gpurig: --bench .*/deep.json: not JSON \(line 1: .*(depth|nest)' --bench "$work/deep.json"
bad empty "^gpurig: report: option '--bench' needs a file" --bench ''
report 2 --bench "$work/bench.json" --rig wopr
grep -q 'give one of those' "$work/err" || fail "--bench without --html: $(cat "$work/err")"
report 2 --json --html "$work/x.html" --rig wopr
grep -q 'exclude each other' "$work/err" || fail "--json with --html: $(cat "$work/err")"
report 2 --html - --markdown - --rig wopr
report 2 --html "$work/same" --markdown "$work/same" --rig wopr
ln -s "$work/elsewhere" "$work/link.html"
report 2 --html "$work/link.html" --rig wopr
[ ! -e "$work/elsewhere" ] || fail "the writer followed a symbolic link"

[ $fails = 0 ] && echo "html: DGX-2 (16 GPUs), p5en (8), wopr (7) and epyc-riser (4, with bench and burn) pages valid, self-contained and reproducible; input escaped; bad inputs refused"
exit $fails
