# REL-16: a newline in --listen is printed escaped: the error stays one line,
# and its tail cannot pose as a message of its own ("serving http://0.0.0.0").
expect_exit=2
expect_stderr_lines=1
expect_stderr='^gpurig: export: --listen 127\.0\.0\.1\\ngpurig: export: serving http://0\.0\.0\.0:9400/metrics: not ADDR:PORT'
run() {
  GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=4gpu "$G" export --root "$D/trees/epyc-riser" \
    --listen $'127.0.0.1\ngpurig: export: serving http://0.0.0.0:9400/metrics' --once
}
