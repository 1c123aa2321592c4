#!/usr/bin/env bash
# gpurig export --textfile when writes fail (REL-11) and when SIGTERM lands
# mid-write (REL-10), with the stand-in NVIDIA libraries on a copy of
# tests/data/trees/epyc-riser.
# Failing writes: as root, a 256 KiB tmpfs (in a mount namespace of its own,
# unshare -m) filled up; otherwise a directory made read-only. The exporter
# warns once, keeps serving HTTP, tries again each sample, and after a minute
# of failures its file says gpurig_textfile_ok 0 (nothing stale for
# node_exporter to go on reporting); when writes work again it says so and the
# file is whole again. Root without a mount namespace skips (exit 77) with
# the reason. SIGTERM during the write's fsync (strace delays it) exits 0 and
# leaves a whole file and no temporary one; without strace that part skips.
# About 75 s (the minute is the exporter's, not shortened for the test).
# Loopback only, bounded in time, and it stops what it started.
# usage: textfile.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
if [ "$(id -u)" = 0 ] && [ -z "${TEXTFILE_NS:-}" ]; then
  if unshare -m true 2>/dev/null; then
    TEXTFILE_NS=1 exec unshare -m bash "$0" "$@"
  fi
  echo "textfile.sh: SKIP: running as root (a read-only directory does not stop root) and unshare -m is not allowed here (no tmpfs to fill)"
  exit 77
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${TEXTFILE_NS:-}" ] && umount "$work/tf" 2>/dev/null
  chmod -R u+w "$work" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "textfile.sh: FAIL: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }
. "$(dirname "$0")/lib.sh" # free_port, until_ok

cp -a "$GPURIG_TEST_DATA/trees/epyc-riser" "$work/tree"
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB
mkdir "$work/tf"
if [ -n "${TEXTFILE_NS:-}" ]; then
  mount -t tmpfs -o size=256k tmpfs "$work/tf" || fail "cannot mount a tmpfs in the namespace"
  how="a full 256 KiB tmpfs"
else
  how="a read-only directory"
fi
port=$(free_port)
"$gpurig" export --listen "127.0.0.1:$port" --root "$work/tree" --interval 0.2 --textfile "$work/tf" \
  >"$work/export.log" 2>&1 &
pids+=($!)
has_ok1() { grep -q '^gpurig_textfile_ok{Hostname="[^"]\+"} 1$' "$work/tf/gpurig.prom" 2>/dev/null; }
until_ok 15 has_ok1 || fail "no textfile written"
curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" || fail "no HTTP answer"

# writes start failing
if [ -n "${TEXTFILE_NS:-}" ]; then
  dd if=/dev/zero of="$work/tf/filler" bs=4k 2>/dev/null || true # until the tmpfs is full
else
  chmod a-w "$work/tf"
fi
warned() { grep -q 'warning: .*gpurig.prom.*trying again at each sample, serving on' "$work/export.log"; }
until_ok 10 warned || fail "no warning for a failed write ($how)"
sleep 2
[ "$(grep -c 'trying again' "$work/export.log")" = 1 ] || fail "the failure was not warned once: $(grep -c 'trying again' "$work/export.log") lines"
kill -0 "${pids[0]}" || fail "gpurig export ended on a failed write"
curl -sf -o "$work/scrape.txt" "http://127.0.0.1:$port/metrics" || fail "HTTP stopped with the textfile failing"
has_ok1 || fail "the last good file was changed before a minute of failures"
echo "$how: warned once, HTTP still answers, the last good file stays for now"

# a minute of failures: the file no longer says every GPU is up
ok0() { grep -q '^gpurig_textfile_ok{Hostname="[^"]\+"} 0$' "$work/tf/gpurig.prom" 2>/dev/null && ! grep -q '^gpurig_gpu_up' "$work/tf/gpurig.prom"; }
gone() { [ ! -e "$work/tf/gpurig.prom" ]; }
stale_cleared() { ok0 || gone; }
until_ok 75 stale_cleared || fail "after a minute of failures the stale file is still there: $(head -c 300 "$work/tf/gpurig.prom")"
echo "after a minute: $(if ok0; then echo 'gpurig.prom says gpurig_textfile_ok 0'; else echo 'gpurig.prom removed'; fi)"
grep 'writes failed for a minute' "$work/export.log"

# writes work again
if [ -n "${TEXTFILE_NS:-}" ]; then rm -f "$work/tf/filler"; else chmod u+w "$work/tf"; fi
until_ok 10 has_ok1 || fail "writes did not resume"
grep -q 'written again' "$work/export.log" || fail "no word that writes resumed"
grep -q '^gpurig_gpu_up{gpu="3"' "$work/tf/gpurig.prom" || fail "the resumed file is not whole"
echo "writes resumed: gpurig_textfile_ok 1 and the GPUs again"
kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
[ "$rc" = 0 ] || fail "export ended with $rc after SIGTERM"

# SIGTERM while the write is in its fsync: exit 0, the file whole, no temporary file
if ! command -v strace >/dev/null; then
  echo "textfile.sh: SIGTERM mid-write: skipped (strace is not installed: nothing widens the window)"
  echo "textfile.sh: ok"
  exit 0
fi
rm -f "$work/tf/"*
# LeakSanitizer cannot run under ptrace: an ASan build checks leaks in the parts above, not here
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
  strace -f -o /dev/null -e inject=fsync:delay_enter=1500000 "$gpurig" export --listen none --root "$work/tree" \
  --interval 0.2 --textfile "$work/tf" >"$work/sigterm.log" 2>&1 &
pids+=($!)
gpid() { pgrep -P "${pids[0]}" -x gpurig; }
has_gpid() { gpid >/dev/null; }
until_ok 15 has_gpid || fail "gpurig did not start under strace"
until_ok 20 has_ok1 || fail "no textfile under strace"
tmp_exists() { compgen -G "$work/tf/gpurig.prom.tmp.*" >/dev/null; }
until_ok 10 tmp_exists || fail "never caught a write in progress"
kill -TERM "$(gpid)"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
[ "$rc" = 0 ] || fail "SIGTERM during the textfile's fsync: exit $rc, not 0"
has_ok1 || fail "the file is not whole after SIGTERM mid-write"
tmp_exists && fail "a temporary file was left: $(ls "$work/tf")"
echo "SIGTERM mid-write: exit 0, gpurig.prom whole, no temporary file"
echo "textfile.sh: ok"
