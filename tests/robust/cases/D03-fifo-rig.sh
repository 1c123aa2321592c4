# D3: a FIFO given as a rig file is refused at once.
expect_exit=2
expect_stderr='r.rig: a FIFO \(named pipe\), not a regular file'
time_limit=5
setup() { mkfifo r.rig; }
run() { "$G" topo --rig ./r.rig; }
