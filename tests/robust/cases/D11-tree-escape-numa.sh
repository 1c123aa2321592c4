# D11: the same through numa_node.
expect_exit=2
expect_stderr='numa_node: a symbolic link that leads out of the --root tree'
time_limit=10
setup() { tree_with epyc-riser "$EPYC_GPU0/numa_node" escape; }
run() { "$G" doctor --root t; }
