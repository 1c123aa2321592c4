# D2: a target that exists and is not a regular file is refused, not replaced.
expect_exit=2
expect_stderr='out: a FIFO \(named pipe\); gpurig writes only a new file or over a regular file'
setup() { mkfifo out; }
run() { "$G" snapshot --root "$D/trees/epyc-riser" out; }
check() { [ -p out ]; }
