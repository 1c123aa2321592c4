# D3: proc/hwloc-nofile-info linked to /dev/zero.
expect_exit=2
expect_stderr='hwloc-nofile-info: a symbolic link that leads out of the --root tree'
time_limit=10
setup() { tree_with epyc-riser "proc/hwloc-nofile-info" zero; }
run() { "$G" report --root t; }
