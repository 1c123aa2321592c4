# REL-09: burn stopped by SIGTERM while NCCL starts: its stop flag ends the run after NCCL answers
# (a partial verdict: exit 1), and the log's directory is gone from TMPDIR.
expect_exit=1
expect_stderr_lines=0
time_limit=20
setup() { mkdir tmp; cp -a "$D/trees/epyc-riser" t; }
run() {
  export TMPDIR=$T/tmp GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=healthy GPURIG_STUB_NCCL_INIT_S=5
  "$G" burn --root t --load allreduce --duration 60 --size 1M >/dev/null &
  local pid=$! k
  for k in $(seq 100); do
    compgen -G "$TMPDIR/gpurig-nccl-log-*" >/dev/null && break
    sleep 0.1
  done
  compgen -G "$TMPDIR/gpurig-nccl-log-*" >/dev/null || echo "no NCCL log directory appeared" >&2
  kill -TERM "$pid"
  wait "$pid"
}
check() { [ -z "$(ls -A tmp)" ] || { echo "left in TMPDIR: $(ls -A tmp)" >&2; return 1; }; }
