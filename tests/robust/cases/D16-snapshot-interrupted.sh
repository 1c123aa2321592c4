# D16: a snapshot ended by SIGTERM leaves no temporary file behind. The write
# window is short, so the signal is sent at once and again while it runs;
# whether it lands before, during or after the write, nothing may be left
# but (at most) the finished snapshot. The writer's own unit test
# (unit_file: writer_cleans_up_on_a_signal) stops it mid-write for certain.
expect_exit=0
expect_new_files='snap.xml'
run() {
  for i in 1 2 3 4 5 6 7 8; do
    "$G" snapshot --root "$D/trees/epyc-riser" snap.xml 2>/dev/null &
    local pid=$!
    sleep "0.0$i"
    kill -TERM $pid 2>/dev/null
    wait $pid 2>/dev/null
  done
  return 0
}
check() { [ -z "$(ls | grep -v '^snap.xml$')" ]; }
