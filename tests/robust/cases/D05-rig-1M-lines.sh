# D5: a million `gpu` lines (19 MB) are refused at the first device the PCI
# domain has no bus number for, not after the whole file has been parsed
# (over 60 s before). rc0 takes bus 1 and each GPU two (its root port and
# itself), so the 128th GPU, on line 131, is one too many.
expect_exit=2
expect_stderr='^gpurig: r\.rig:131:1: too many devices for one PCI domain \(at most 255'
expect_stderr_lines=""
expect_new_files=""
time_limit=5
setup() {
  {
    rig_head
    awk 'BEGIN { for (i = 0; i < 1000000; i++) print "gpu \"RTX 3090\" rc0" }'
  } > r.rig
}
run() { "$G" topo --rig r.rig; }
