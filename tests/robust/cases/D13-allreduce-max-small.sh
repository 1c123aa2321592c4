# D13a: --allreduce-max below the smallest sweep said "not run: too little free
# GPU memory"; the user's own limit is named, at parse time.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr="^gpurig: bench: --allreduce-max '4K': below 64 KiB, the smallest all-reduce sweep gpurig runs"
run() { GPURIG_DRIVER_DIR=$STUB "$G" bench --allreduce-max 4K --root "$D/trees/epyc-riser" --quick --no-sm; }
