# D3: a FIFO at proc/meminfo.
expect_exit=2
expect_stderr='proc/meminfo: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() { tree_with epyc-riser "proc/meminfo" fifo; }
run() { "$G" snapshot out.xml --root t; }
