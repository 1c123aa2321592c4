# D3: a symlink loop in the tree gives one line and exit 2, at once.
expect_exit=2
expect_stderr='class: a loop of symbolic links'
time_limit=10
setup() { tree_with epyc-riser "$EPYC_GPU0/class" loop; }
run() { "$G" topo --root t; }
