# D13a: --allreduce-max 3M said "sizes capped at 2 MiB by free GPU memory"; the
# note names --allreduce-max and its rounding (small copies keep the run fast).
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=0
expect_stderr_lines=1 # the plan: tests and expected duration, before the first test
run() { GPURIG_DRIVER_DIR=$STUB "$G" bench --size 4K --allreduce-max 3M --root "$D/trees/epyc-riser" --quick --no-sm; }
check() { grep -q 'info bench.allreduce-note: sizes capped at 2 MiB by --allreduce-max 3 MiB, rounded down to a power of two' "$1" &&
  ! grep -q 'by free GPU memory' "$1"; }
