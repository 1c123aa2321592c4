#!/usr/bin/env bash
# gpurig watch and export from the command line, on copies of
# tests/data/trees/epyc-riser with the stand-in NVIDIA libraries: the lines
# and JSON lines, a root port whose correctable count climbs (named by link,
# both ends and slot), a GPU that vanishes or hangs, a driver that dies
# mid-run (watch --json's events), and bad input (one
# line, exit 2, nothing left behind).
# usage: watch.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB
unset GPURIG_STUB_SCENARIO GPURIG_STUB_SCENARIO_FILE
fails=0
fail() { echo "watch.sh: FAIL: $*" >&2; fails=$((fails + 1)); }
expect_rc() { # want, name, command...
  local want=$1 name=$2 rc=0
  shift 2
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want: $(head -c 400 "$work/err")"
}
has() { grep -qF -- "$1" "$work/out" || fail "$2: no line with '$1' in: $(head -c 600 "$work/out")"; }
err_has() { grep -qF -- "$1" "$work/err" || fail "$2: stderr lacks '$1': $(head -c 400 "$work/err")"; }

tree=$work/tree
cp -a "$GPURIG_TEST_DATA/trees/epyc-riser" "$tree"
aer=$tree/sys/devices/pci0000:00/0000:00:03.1/aer_dev_correctable

# --once: a line per GPU, the link whose root port counted errors, named
printf 'RxErr 19\nBadTLP 0\nTOTAL_ERR_COR 19\n' >"$aer"
expect_rc 0 once "$gpurig" watch --once --root "$tree"
[ "$(grep -cE '^[0-9:]+  GPU[0-3] 0000:' "$work/out")" = 4 ] || fail "once: not 4 GPU lines"
has "link GPU1 0000:02:00.0 <-> root port 0000:00:03.1, slot 5:  AER at root port 0000:00:03.1: 19 correctable" once
has "link Gen1/4 x8/16  replay 3" once
echo "once: $(grep -F 'link GPU1' "$work/out")"

# --count: the count climbs between samples: an event on that link, exit 1 (warning)
printf 'RxErr 7\nBadTLP 0\nTOTAL_ERR_COR 7\n' >"$aer"
( sleep 0.5; printf 'RxErr 19\nBadTLP 0\nTOTAL_ERR_COR 19\n' >"$aer.new"; mv "$aer.new" "$aer" ) &
expect_rc 1 climb "$gpurig" watch --count 4 --interval 0.4 --root "$tree"
wait
has "event warn: 12 correctable AER errors at root port 0000:00:03.1, on the link GPU1 0000:02:00.0 <-> root port 0000:00:03.1, slot 5" climb
has "19 correctable (12 in the last minute, 12 since start)" climb
[ "$(grep -c '^# gpurig watch' "$work/out")" = 1 ] || fail "climb: the header is not printed once"
echo "climb: $(grep -F 'event warn: 12' "$work/out")"

# --json: one object per line, units in the keys, unknown values null
expect_rc 1 json "$gpurig" watch --json --count 2 --interval 0.1 --root "$tree"
[ "$(wc -l <"$work/out")" = 2 ] || fail "json: not 2 lines"
jq -e -s 'length == 2 and (.[1].gpus | length == 4) and .[1].gpus[1].pcie_replay_total >= 4
          and .[0].gpus[0].ecc_corrected_total == null and .[0].gpus[0].mem_temp_c == null
          and (.[0].links[] | select(.device == "GPU1 0000:02:00.0") | .slot == "5" and .aer_port.correctable.total == 19)
          and (.[1].events | map(.text) | any(test("PCIe replay")))
          and .[1].power_total_w > 0 and (.[1].power_total_w - ([.[1].gpus[].power_w] | add) | fabs) < 0.05' "$work/out" >/dev/null ||
  fail "json: $(head -c 600 "$work/out")"
jq -e -s 'all(has("power_budget_ratio") | not)' "$work/out" >/dev/null || fail "json: power_budget_ratio without --psu"
# --psu: the summed draw as a share of the PSU; refused without --json (the screen has no field for it)
expect_rc 1 json-psu "$gpurig" watch --json --count 2 --interval 0.1 --psu 2000 --root "$tree"
jq -e -s '.[1].power_budget_ratio > 0 and (.[1].power_budget_ratio - .[1].power_total_w / 2000 | fabs) < 0.0001' \
  "$work/out" >/dev/null || fail "json --psu 2000: $(head -c 300 "$work/out")"
expect_rc 2 psu-text "$gpurig" watch --once --psu 2000 --root "$tree"

# --svg: the samples as a chart, well-formed, drawn by librsvg; never written through a link
expect_rc 1 svg "$gpurig" watch --count 6 --interval 0.1 --root "$tree" --svg "$work/chart.svg"
xmllint --noout "$work/chart.svg" 2>"$work/xmllint.err" || fail "svg: not well-formed: $(head -3 "$work/xmllint.err")"
[ "$(grep -c '<path fill="none"' "$work/chart.svg")" = 12 ] || fail "svg: not 3 series x 4 GPUs"
grep -q 'PCIe replay' "$work/chart.svg" || fail "svg: the replay event is not marked"
if command -v rsvg-convert >/dev/null; then
  rsvg-convert -o "$work/chart.png" "$work/chart.svg" || fail "svg: rsvg-convert cannot draw it"
  [ "$(head -c 8 "$work/chart.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "svg: no PNG drawn"
  echo "svg: $(wc -c <"$work/chart.svg") bytes, drawn by rsvg-convert into a $(wc -c <"$work/chart.png")-byte PNG"
fi
ln -s "$work/precious" "$work/link.svg"
echo precious >"$work/precious"
expect_rc 2 "svg onto a link" "$gpurig" watch --once --root "$tree" --svg "$work/link.svg"
err_has "a symbolic link" "svg onto a link"
[ "$(cat "$work/precious")" = precious ] || fail "svg: wrote through a symlink"
expect_rc 2 "svg into no directory" "$gpurig" watch --once --root "$tree" --svg "$work/none/chart.svg"

# a GPU that vanishes: LOST, a failure event, exit 2
GPURIG_STUB_SCENARIO=vanish expect_rc 2 vanish "$gpurig" watch --once --root "$tree"
has "GPU2 0000:41:00.0    LOST" vanish
has "event fail: GPU2 0000:41:00.0 is lost" vanish

# the driver dies mid-run (stand-in "driver-gone", written once two samples are out: every
# per-device query answers Driver Not Loaded): watch --json says so, each GPU lost with a
# failure event naming the driver, and exits 2. The 30 samples leave the switch time to land.
echo 4gpu >"$work/scenario"
(
  for _ in $(seq 200); do [ "$(wc -l <"$work/out" 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.05; done
  echo driver-gone >"$work/scenario"
) &
GPURIG_STUB_SCENARIO_FILE=$work/scenario expect_rc 2 driver-gone timeout 60 "$gpurig" watch --json --count 30 --interval 0.2 --root "$tree"
wait
jq -e -s '(.[0].gpus | map(.state) == ["ok","ok","ok","ok"])
          and (.[-1].gpus | map(.state) == ["lost","lost","lost","lost"])
          and ([.[].events[] | select(.severity == "fail" and (.text | test("^GPU[0-3] 0000:[0-9a-f:.]+ is lost: GPU[0-3]: the driver is gone: Driver Not Loaded$")))]
               | map(.gpu) | sort == [0,1,2,3])' "$work/out" >/dev/null ||
  fail "driver-gone: no lost GPUs or events naming the driver in: $(jq -c '[.sample, [.gpus[].state], [.events[].text]]' "$work/out" | tail -3)"
echo "driver-gone: $(jq -r '.events[] | select(.severity == "fail") | .text' "$work/out" | head -1)"

# a GPU whose driver call hangs: STALE after 0.5 s, the others on time
GPURIG_STUB_SCENARIO=hang GPURIG_STUB_HANG_S=3 expect_rc 1 hang timeout 20 "$gpurig" watch --count 2 --interval 0.2 --root "$tree"
has "GPU1 0000:02:00.0    STALE" hang
has "GPU0 0000:01:00.0    ok" hang

# no GPU driver: the links alone, a warning, and exit 1 (the bus shows GPUs no driver answers for)
GPURIG_DRIVER_DIR=$work/none expect_rc 1 nodriver "$gpurig" watch --once --root "$tree"
err_has "warning: no GPU values" nodriver
has "link GPU1 0000:02:00.0 <-> root port 0000:00:03.1, slot 5" nodriver

# Xids from a kernel log that grows while watching
: >"$work/kmsg"
( sleep 0.5; echo '[ 99.1] NVRM: Xid (PCI:0000:41:00): 79, pid=1, GPU has fallen off the bus.' >>"$work/kmsg" ) &
GPURIG_DRIVER_DIR=$work/none expect_rc 2 kmsg "$gpurig" watch --count 4 --interval 0.3 --root "$tree" --kmsg "$work/kmsg"
wait
has "event fail: GPU at 0000:41:00: Xid 79 (GPU has fallen off the bus)" kmsg

# --kmsg FILE is followed by name as tail -F follows it (REL-18): an Xid written after a
# copytruncate rotation and after a rename rotation is seen. watch runs until told to stop;
# each step waits for what watch printed (bounded), never for a fixed time.
xid() { echo "[ $1.0] NVRM: Xid (PCI:0000:41:00): $2, pid=1, $3" >>"$4"; }
until_out() { local end=$((SECONDS + 15)); until grep -qF -- "$1" "$work/rot.out"; do
  [ $SECONDS -lt $end ] || { fail "rotation: no '$1' within 15 s: $(tail -c 600 "$work/rot.out")"; return 1; }; sleep 0.1; done; }
klog=$work/kern.log
for i in $(seq 40); do echo "[ $i.0] eth0: link up, 100 Gbps, nothing to do with GPUs ($i)"; done >"$klog"
"$gpurig" watch --interval 0.1 --root "$tree" --kmsg "$klog" >"$work/rot.out" 2>"$work/rot.err" &
watcher=$!
until_out "GPU3 0000:" &&
  { xid 101 79 "GPU has fallen off the bus." "$klog"; until_out "Xid 79"; } &&
  { cp "$klog" "$klog.1" && : >"$klog" && xid 102 48 "An uncorrectable double bit error." "$klog"; until_out "Xid 48"; } &&
  until_out "the kernel log $klog shrank from" &&
  { mv "$klog" "$klog.2" && xid 103 31 "MMU Fault." "$klog.2" && xid 104 43 "Reset channel." "$klog"; until_out "Xid 43"; } &&
  until_out "Xid 31" && until_out "the kernel log $klog is a new file (rotated)" &&
  { xid 105 13 "Graphics Engine Exception." "$klog"; until_out "Xid 13"; }
kill -TERM "$watcher" 2>/dev/null || true
rc=0; wait "$watcher" || rc=$?
[ "$rc" = 2 ] || fail "rotation: exit $rc after SIGTERM, expected 2 (Xid 79 and 48 are failures): $(head -c 300 "$work/rot.err")"
[ "$(grep -c 'event .*Xid' "$work/rot.out")" = 5 ] || fail "rotation: not 5 Xid events: $(grep 'event' "$work/rot.out")"
echo "rotation: $(grep -c 'event .*Xid' "$work/rot.out") Xids seen across copytruncate and rename; $(grep -m1 -o 'the kernel log [^:]*shrank[^:]*' "$work/rot.out")"

# bad input: one line, exit 2
for args in "--interval 0" "--interval 0.05" "--interval abc" "--interval 1h" "--count 0" "--count x" "--listen 1.2.3.4:9" \
            "--kmsg $work/missing"; do
  # shellcheck disable=SC2086
  expect_rc 2 "watch $args" "$gpurig" watch --once --root "$tree" $args
  [ "$(wc -l <"$work/err")" -le 2 ] || fail "watch $args: more than one error line"
done
mkfifo "$work/fifo"
expect_rc 2 "watch --kmsg FIFO" timeout 10 "$gpurig" watch --once --root "$tree" --kmsg "$work/fifo"
for args in "--listen nowhere" "--listen 127.0.0.1:0" "--listen 127.0.0.1:70000" "--listen none" "--interval 0"; do
  # shellcheck disable=SC2086
  # --count 2: one sample (--count 1, --once) opens no port and --listen none prints it
  expect_rc 2 "export $args" timeout 10 "$gpurig" export --count 2 --root "$tree" $args
done

# export --textfile: written by rename, never through a link or onto a FIFO
mkdir "$work/tf"
expect_rc 0 textfile "$gpurig" export --once --listen none --textfile "$work/tf" --root "$tree"
grep -q '^gpurig_pcie_aer_errors_total{link="GPU1 0000:02:00.0 <-> root port 0000:00:03.1",slot="5"' "$work/tf/gpurig.prom" ||
  fail "textfile: no AER series"
[ "$(ls -A "$work/tf")" = gpurig.prom ] || fail "textfile: left $(ls -A "$work/tf")"
echo precious >"$work/precious"
ln -sf "$work/precious" "$work/tf/gpurig.prom"
expect_rc 2 "textfile onto a link" "$gpurig" export --once --listen none --textfile "$work/tf" --root "$tree"
[ "$(cat "$work/precious")" = precious ] || fail "textfile: wrote through a symlink"
rm "$work/tf/gpurig.prom" && mkfifo "$work/tf/gpurig.prom"
expect_rc 2 "textfile onto a FIFO" timeout 10 "$gpurig" export --once --listen none --textfile "$work/tf" --root "$tree"
[ "$(ls -A "$work/tf")" = gpurig.prom ] || fail "textfile: left $(ls -A "$work/tf")"

# the HTTP side: /metrics, /, 404, 405; a port already taken: one line, exit 2
port=19473
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break; port=$((20000 + RANDOM % 12000)); done
timeout 15 "$gpurig" export --listen "127.0.0.1:$port" --root "$tree" --interval 0.5 >/dev/null 2>&1 &
exporter=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break; sleep 0.2; done
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "http://127.0.0.1:$port/metrics")" = 200 ] || fail "http: /metrics"
[ "$(code "http://127.0.0.1:$port/")" = 200 ] || fail "http: /"
[ "$(code "http://127.0.0.1:$port/nothing")" = 404 ] || fail "http: not 404"
[ "$(code -X POST "http://127.0.0.1:$port/metrics")" = 405 ] || fail "http: POST not 405"
# the sampler keeps sampling while it serves: over 3 s (6 intervals of 0.5 s) the count grows, and the
# last sample is younger than that gap, however busy the machine (a starved machine may skip some
# intervals, so no exact count is asked)
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" 'index($1, m "{") == 1 { print $2 }'; }
n1=$(metric gpurig_samples_total)
sleep 3
n2=$(metric gpurig_samples_total)
age=$(metric gpurig_sample_age_seconds)
awk -v a="$n1" -v b="$n2" -v age="$age" 'BEGIN { exit !(a != "" && b + 0 > a + 0 && age != "" && age + 0 < 3) }' ||
  fail "http: sampling: samples_total $n1 then $n2 over 3 s, sample age $age s"
expect_rc 2 "port in use" timeout 10 "$gpurig" export --count 2 --listen "127.0.0.1:$port" --root "$tree"
err_has "cannot listen there" "port in use"
kill "$exporter" 2>/dev/null || true
wait "$exporter" 2>/dev/null || true
echo "http: /metrics 200, / 200, /nothing 404, POST 405; a second exporter on the port: one line, exit 2"

[ "$fails" = 0 ] || { echo "watch.sh: $fails failure(s)" >&2; exit 1; }
echo "watch.sh: ok"
