# D3: proc/cpuinfo linked to /dev/zero: libhwloc would read it forever.
expect_exit=2
expect_stderr='proc/cpuinfo: a symbolic link that leads out of the --root tree \(to /dev/zero\)'
time_limit=10
setup() { tree_with epyc-riser "proc/cpuinfo" zero; }
run() { "$G" topo --root t; }
