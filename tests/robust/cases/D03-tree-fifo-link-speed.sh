# D3: a FIFO at a link file in a --root tree is refused at once, before anything reads it.
expect_exit=2
expect_stderr='current_link_speed: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() { tree_with epyc-riser "$EPYC_GPU0/current_link_speed" fifo; }
run() { "$G" topo --root t; }
