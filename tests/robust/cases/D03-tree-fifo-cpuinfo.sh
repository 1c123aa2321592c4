# D3: a FIFO at proc/cpuinfo, which libhwloc reads with fgets.
expect_exit=2
expect_stderr='proc/cpuinfo: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() { tree_with epyc-riser "proc/cpuinfo" fifo; }
run() { "$G" topo --root t; }
