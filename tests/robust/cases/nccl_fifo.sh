# NCCL topology file: a FIFO given as --input is refused before anything
# reads it (the format is told from the bytes, so the check comes first).
expect_exit=2
expect_stderr='^gpurig: topo\.xml: .*FIFO'
time_limit=5
setup() { mkfifo topo.xml; }
run() { "$G" topo --input topo.xml; }
