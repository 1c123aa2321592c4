# D3: gpurig watch on a tree whose root port's AER counter is a FIFO: refused at once, before any read.
expect_exit=2
expect_stderr='aer_dev_correctable: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() { tree_with epyc-riser sys/devices/pci0000:00/0000:00:03.1/aer_dev_correctable fifo; }
run() { GPURIG_DRIVER_DIR=$STUB "$G" watch --once --root t; }
