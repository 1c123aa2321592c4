# D19: the same in JSON mode: exit 3, the one line, nothing on stdout.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=3
expect_stderr='^gpurig: nothing to show: the NVIDIA driver sees no GPU'
run() { GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=nogpu "$G" gpus --json; }
check() { [ ! -s "$1" ]; }
