# 4000 bridges on two RTX 3090s: each GPU's NVLinks are counted against its catalog's 4 in file
# order, so the second statement (line 6) is the error, not a topology of 16,000 links.
expect_exit=2
expect_stderr='^gpurig: r\.rig:6:1: gpu0 would have 8 NVLinks; an RTX 3090 has 4'
time_limit=5
setup() {
  { rig_head; echo 'gpu 2 "RTX 3090" rc0'; awk 'BEGIN { for (i = 0; i < 4000; i++) print "nvlink gpu0 gpu1" }'; } > r.rig
}
run() { "$G" topo --rig r.rig; }
