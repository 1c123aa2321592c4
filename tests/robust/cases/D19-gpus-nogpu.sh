# D19: gpus exited 0 when the driver sees no GPU, bench 3; both now exit 3.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=3
expect_stderr='^gpurig: nothing to show: the NVIDIA driver sees no GPU \(.*0 GPUs\)$'
run() { GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=nogpu "$G" gpus; }
check() { [ ! -s "$1" ]; }
