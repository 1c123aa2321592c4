# D3: a FIFO given as --input is refused at once, not opened and waited on.
expect_exit=2
expect_stderr='f: .*FIFO'
time_limit=5
setup() { mkfifo f; }
run() { "$G" topo --input f; }
