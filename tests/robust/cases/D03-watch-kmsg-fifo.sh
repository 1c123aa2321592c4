# D3: --kmsg naming a FIFO is refused with one line, never opened for a blocking read.
expect_exit=2
expect_stderr='--kmsg k: not a regular file or the kernel log device'
time_limit=10
setup() { mkfifo k; }
run() { GPURIG_DRIVER_DIR=$STUB "$G" watch --once --kmsg k --root "$D/trees/epyc-riser"; }
