# D5: 50,000 named switches, each below the one before, are refused at the
# first one the PCI domain has no bus number for (line 131), not after every
# name has been looked up linearly (9.5 s before).
expect_exit=2
expect_stderr='^gpurig: r\.rig:131:1: too many devices for one PCI domain \(at most 255'
expect_stderr_lines=""
expect_new_files=""
time_limit=5
setup() {
  {
    rig_head; echo 'switch sw0 rc0'
    awk 'BEGIN { for (i = 1; i < 50000; i++) printf "switch sw%d sw%d\n", i, i - 1; print "gpu \"RTX 3090\" sw0" }'
  } > r.rig
}
run() { "$G" topo --rig r.rig; }
