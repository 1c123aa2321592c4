# REL-22: a one-value rig statement given twice (nodes 2, then nodes 3) is
# refused with FILE:LINE:COL and where the first one is, not replaced silently.
expect_exit=2
expect_stderr='^gpurig: (topo: )?\./dup\.rig:7:1: a second nodes statement \(the first is at line 6, column 1\)'
setup() { cp "$D/../../fuzz/corpus/rig/dup-one-value.rig" dup.rig; }
run() { "$G" topo --json --rig ./dup.rig; }
