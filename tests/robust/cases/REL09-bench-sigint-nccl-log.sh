# REL-09: SIGINT while NCCL starts (its INFO log's private directory exists under TMPDIR): bench
# ends by the signal as before (130, the default disposition), and the directory is gone.
expect_exit=130
expect_stderr_lines=0
time_limit=20
setup() { mkdir tmp; }
run() {
  export TMPDIR=$T/tmp GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=4gpu GPURIG_STUB_NCCL_INIT_S=20
  env --default-signal=INT "$G" bench --root "$D/trees/epyc-riser" --quick >/dev/null 2>&1 &
  local pid=$! k
  for k in $(seq 200); do # until the log's directory exists (bench's all-reduce phase), at most 20 s
    compgen -G "$TMPDIR/gpurig-nccl-log-*" >/dev/null && break
    sleep 0.1
  done
  compgen -G "$TMPDIR/gpurig-nccl-log-*" >/dev/null || echo "no NCCL log directory appeared" >&2
  kill -INT "$pid"
  wait "$pid"
}
check() { [ -z "$(ls -A tmp)" ] || { echo "left in TMPDIR: $(ls -A tmp)" >&2; return 1; }; }
