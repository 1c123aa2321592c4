# Counts far out of range (NUMA nodes, RAM, NIC functions, an NVSwitch range) are refused at
# their column, before anything is built.
expect_exit=2
expect_stderr='^gpurig: r\.rig:2:25: expected a whole number from 1 to 8, got "99999999999999999999999"'
setup() { printf 'rig "x"\ncpu c0 "EPYC 7302" numa 99999999999999999999999 ram 99999999999999999999\n' > r.rig; }
run() { "$G" topo --rig r.rig; }
