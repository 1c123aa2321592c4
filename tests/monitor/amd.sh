#!/usr/bin/env bash
# gpurig export and watch on AMD GPUs (the stand-in ROCm SMI, scenarios
# tinybox-red and mi50-bridge on their fixture trees): export --once passes
# promtool, whose only complaints may be about AMD's device-metrics-exporter's
# own names (as prometheus.sh allows dcgm-exporter's); every GPU has its
# AMD-named series and no dcgm-exporter name appears; watch --once prints one
# line per GPU; GPU2 falling off the bus mid-watch (tinybox-red-vanish written
# into the scenario file) is shown LOST with an event and exit 2, the others
# stay. On scenario mixed (both vendors) each GPU is under its own
# vendor's names. On mi50-xgmi-errors the xGMI error series and watch's event
# appear. No network, nothing left running.
# usage: amd.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
command -v promtool >/dev/null || { echo "amd.sh: FAIL: promtool is not installed (apt-get install prometheus)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "amd.sh: FAIL: $*" >&2; exit 1; }
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB
# AMD's names promtool lints (a gauge named *_total or *_count): theirs, kept as they are
amd_names='^(gpu_ecc_correct_total|gpu_ecc_uncorrect_total|pcie_replay_count) '
for case in "tinybox-red 6" "mi50-bridge 4"; do
  set -- $case
  sc=$1 n=$2
  GPURIG_STUB_SCENARIO=$sc "$gpurig" export --once --root "$GPURIG_TEST_DATA/trees/$sc" >"$work/$sc.prom" ||
    fail "$sc: export --once exited $?"
  promtool check metrics <"$work/$sc.prom" >"$work/$sc.lint" 2>&1 || true
  if grep -Ev "$amd_names" "$work/$sc.lint" | grep -q .; then fail "$sc: promtool: $(cat "$work/$sc.lint")"; fi
  for m in gpu_edge_temperature gpu_junction_temperature gpu_power_usage gpu_gfx_activity gpu_used_vram; do
    got=$(grep -c "^$m{" "$work/$sc.prom" || true)
    [ "$got" = "$n" ] || fail "$sc: $got $m series, expected $n"
  done
  ! grep -q '^DCGM_' "$work/$sc.prom" || fail "$sc: dcgm-exporter names on AMD GPUs"
  got=$(grep -c '^gpurig_gpu_up{.*} 1$' "$work/$sc.prom" || true)
  [ "$got" = "$n" ] || fail "$sc: $got GPUs up, expected $n"
  GPURIG_STUB_SCENARIO=$sc "$gpurig" watch --once --root "$GPURIG_TEST_DATA/trees/$sc" >"$work/$sc.watch" 2>&1 ||
    fail "$sc: watch --once exited $?"
  got=$(grep -c ' GPU[0-9] .* ok ' "$work/$sc.watch" || true)
  [ "$got" = "$n" ] || fail "$sc: watch --once printed $got GPU lines, expected $n"
done
# GPU2 falls off the bus mid-watch: the stand-in reads its scenario from a file on every call
echo tinybox-red >"$work/scenario"
GPURIG_STUB_SCENARIO_FILE=$work/scenario timeout 60 "$gpurig" watch --count 30 --interval 0.1 \
  --root "$GPURIG_TEST_DATA/trees/tinybox-red" >"$work/vanish.out" 2>&1 &
watch_pid=$!
for _ in $(seq 100); do grep -q ' GPU2 .* ok ' "$work/vanish.out" && break; sleep 0.1; done
grep -q ' GPU2 .* ok ' "$work/vanish.out" || { kill "$watch_pid" 2>/dev/null; fail "vanish: no first sample of GPU2"; }
echo tinybox-red-vanish >"$work/scenario"
rc=0
wait "$watch_pid" || rc=$?
[ "$rc" = 2 ] || fail "vanish: watch exited $rc, expected 2 (a GPU lost)"
grep -q ' GPU2 0000:43:00.0 *LOST ' "$work/vanish.out" || fail "vanish: GPU2 never shown LOST"
grep -q 'event fail: GPU2 0000:43:00.0 is lost' "$work/vanish.out" || fail "vanish: no event for the lost GPU"
! grep -q ' GPU[013-5] .* LOST ' "$work/vanish.out" || fail "vanish: another GPU shown LOST"

# both vendors (scenario mixed: two RTX 3090s, two RX 7900 XTX): each GPU under its vendor's names
GPURIG_STUB_SCENARIO=mixed "$gpurig" export --once --root "$GPURIG_TEST_DATA/trees/mixed" >"$work/mixed.prom" ||
  fail "mixed: export --once exited $?"
promtool check metrics <"$work/mixed.prom" >"$work/mixed.lint" 2>&1 || true
if grep -Ev "$amd_names" "$work/mixed.lint" | grep -v '^DCGM_' | grep -q .; then
  fail "mixed: promtool: $(cat "$work/mixed.lint")"
fi
for m in DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_XID_ERRORS gpu_edge_temperature gpu_power_usage; do
  got=$(grep -c "^$m{" "$work/mixed.prom" || true)
  [ "$got" = 2 ] || fail "mixed: $got $m series, expected 2"
done
! grep -q '^DCGM_.*card_model=\|^gpu_edge_temperature.*modelName=' "$work/mixed.prom" || fail "mixed: a GPU under the other vendor's names"
! grep '^DCGM_' "$work/mixed.prom" | grep -q 'RX 7900' || fail "mixed: an AMD GPU under dcgm-exporter's names"
got=$(grep -c '^gpurig_gpu_up{.*} 1$' "$work/mixed.prom" || true)
[ "$got" = 4 ] || fail "mixed: $got GPUs up, expected 4"

# xGMI errors (scenario mi50-xgmi-errors: GPU1's xGMI block counts corrected errors, more at each
# read, and the driver's error state is "several"): AMD's WAFL series and gpurig's error state in
# export, a warn event in watch as the count rises
sc=mi50-xgmi-errors
GPURIG_STUB_SCENARIO=$sc "$gpurig" export --once --root "$GPURIG_TEST_DATA/trees/mi50-bridge" >"$work/$sc.prom" ||
  fail "$sc: export --once exited $?"
promtool check metrics <"$work/$sc.prom" >"$work/$sc.lint" 2>&1 || true
if grep -Ev "$amd_names" "$work/$sc.lint" | grep -q .; then fail "$sc: promtool: $(cat "$work/$sc.lint")"; fi
for m in gpu_ecc_correct_xgmi_wafl gpu_ecc_uncorrect_xgmi_wafl gpurig_gpulink_error_state; do
  got=$(grep -c "^$m{" "$work/$sc.prom" || true)
  [ "$got" = 4 ] || fail "$sc: $got $m series, expected 4"
done
grep -q '^gpurig_gpulink_error_state{gpu="1",.*} 2$' "$work/$sc.prom" || fail "$sc: GPU1's error state is not 2"
grep -q '^gpu_ecc_correct_xgmi_wafl{gpu_id="1",.*} [1-9][0-9]*$' "$work/$sc.prom" || fail "$sc: GPU1 counts no xGMI error"
! grep -q '^gpu_ecc_correct_xgmi_wafl{gpu_id="[023]",.*} [1-9]' "$work/$sc.prom" || fail "$sc: errors on a healthy GPU"
rc=0
GPURIG_STUB_SCENARIO=$sc "$gpurig" watch --count 3 --interval 0.1 --root "$GPURIG_TEST_DATA/trees/mi50-bridge" \
  >"$work/$sc.watch" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "$sc: watch exited $rc, expected 1 (a warning)"
grep -q 'event warn: GPU1 0000:43:00.0: xGMI errors rose (corrected [0-9]*, uncorrected 0 in all; the driver.s error state: several errors)' \
  "$work/$sc.watch" || fail "$sc: no xGMI event: $(grep event "$work/$sc.watch")"
! grep -q 'event .*GPU[023] .*xGMI' "$work/$sc.watch" || fail "$sc: an xGMI event on a healthy GPU"
echo "amd.sh: export (promtool) and watch --once on tinybox-red (6 GPUs) and mi50-bridge (4 GPUs); both vendors' names on mixed; xGMI errors in export and watch"
