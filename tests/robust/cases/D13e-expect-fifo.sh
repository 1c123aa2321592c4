# D13e/D3: a FIFO given as --expect is refused at once, not opened and waited on.
expect_exit=2
expect_stderr='^gpurig: e.fifo: a FIFO \(named pipe\), not a regular file'
expect_stderr_lines=''
expect_new_files=''
time_limit=5
setup() { mkfifo e.fifo; }
run() { "$G" doctor --root "$D/trees/doctor-healthy" --expect e.fifo; }
