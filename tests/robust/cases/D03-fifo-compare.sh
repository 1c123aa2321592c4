# D3: compare with a FIFO among its rigs is refused at once.
expect_exit=2
expect_stderr='r.rig: a FIFO \(named pipe\), not a regular file'
time_limit=5
setup() { mkfifo r.rig; }
run() { "$G" compare wopr ./r.rig; }
