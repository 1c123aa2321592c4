# D11: a link out of the tree is refused, and the file it points at is never read or echoed.
expect_exit=2
expect_stderr='current_link_speed: a symbolic link that leads out of the --root tree'
time_limit=10
setup() { tree_with epyc-riser "$EPYC_GPU0/current_link_speed" escape; }
run() { "$G" topo --root t; }
