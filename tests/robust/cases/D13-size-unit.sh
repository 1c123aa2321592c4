# D13b: small copies are named in their own unit in the finding, never "0 KiB".
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=1 # the all-reduce over the stand-in x8 link is under its floor
expect_stderr_lines=1 # the plan: tests and expected duration, before the first test
run() { GPURIG_DRIVER_DIR=$STUB "$G" bench --size 4K --allreduce-max 64K --root "$D/trees/epyc-riser" --quick --no-sm; }
check() { grep -q 'Copies of 4 KiB are bound by per-copy latency' "$1" && ! grep -q ' 0 KiB' "$1"; }
