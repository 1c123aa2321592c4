# D13b: --size 3 ran 16-byte copies without a note ("Copies of 0 KiB ...").
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr="^gpurig: bench: --size '3': below 4 KiB a copy times only its own latency"
run() { GPURIG_DRIVER_DIR=$STUB "$G" bench --size 3 --root "$D/trees/epyc-riser" --quick --no-sm; }
