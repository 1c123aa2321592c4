# D13b: a size that is not whole 16-byte words was rounded without a note.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr="^gpurig: bench: --size '4100': copies are whole 16-byte words"
run() { GPURIG_DRIVER_DIR=$STUB "$G" bench --size 4100 --root "$D/trees/epyc-riser" --quick --no-sm; }
