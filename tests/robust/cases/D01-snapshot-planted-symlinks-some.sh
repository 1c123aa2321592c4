# D1: with links planted at 63 of the 64 names, snapshot takes the free one
# and the links' target is untouched. The case removes its own links after.
expect_exit=0
expect_stderr='wrote shared/snap.xml'
expect_new_files='shared/snap.xml'
setup() { mkdir -m 1777 shared; }
run() {
  bash -c 'for k in $(seq 0 62); do ln -s "$OUTSIDE/victim" "shared/snap.xml.tmp.$$.$k"; done
           exec "$G" snapshot --root "$D/trees/epyc-riser" shared/snap.xml'
  local rc=$?
  [ "$(find shared -type l | wc -l)" -eq 63 ] || { echo "links changed" >&2; return 99; }
  find shared -type l -delete
  return $rc
}
check() { head -c 5 shared/snap.xml | grep -q '<?xml' && [ "$(cat "$OUTSIDE/victim")" = precious ]; }
