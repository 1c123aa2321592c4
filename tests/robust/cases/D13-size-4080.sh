# D13b: --size 4080 was reported as "Copies of 3 KiB".
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr="^gpurig: bench: --size '4080': below 4 KiB"
run() { GPURIG_DRIVER_DIR=$STUB "$G" bench --size 4080 --root "$D/trees/epyc-riser" --quick --no-sm; }
