# D3: a FIFO at a device's class file.
expect_exit=2
expect_stderr='class: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() { tree_with epyc-riser "$EPYC_GPU0/class" fifo; }
run() { "$G" doctor --root t; }
