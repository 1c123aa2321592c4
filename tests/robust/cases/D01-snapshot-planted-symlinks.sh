# D1: a symlink planted at every name snapshot might use for its temporary
# file (TARGET.tmp.PID.K, K < 64) is never followed: the victim stays intact
# and snapshot refuses. The child shell's PID becomes gpurig's through exec,
# so the names are known; the case removes its own links after.
expect_exit=2
expect_stderr='snap.xml: cannot write: all 64 names for a temporary file beside it exist'
setup() { mkdir -m 1777 shared; }
run() {
  bash -c 'for k in $(seq 0 63); do ln -s "$OUTSIDE/victim" "shared/snap.xml.tmp.$$.$k"; done
           exec "$G" snapshot --root "$D/trees/epyc-riser" shared/snap.xml'
  local rc=$?
  [ "$(find shared -type l | wc -l)" -eq 64 ] || { echo "links changed" >&2; return 99; }
  find shared -type l -delete
  return $rc
}
check() { [ ! -e shared/snap.xml ] && [ "$(cat "$OUTSIDE/victim")" = precious ]; }
