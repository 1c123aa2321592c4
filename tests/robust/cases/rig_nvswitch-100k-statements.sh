# nvswitch and nvlink statements share one cap (4096): 100,000 nvswitch lines are refused at the
# first one over, while the file is read, not after every statement has been resolved.
expect_exit=2
expect_stderr='^gpurig: r\.rig:4101:1: too many nvlink statements \(at most 4096 nvlink and nvswitch statements'
time_limit=5
setup() {
  { rig_head; echo 'gpu 8 "A100 SXM4 40GB" rc0'; awk 'BEGIN { for (i = 0; i < 100000; i++) print "nvswitch 6 gpu0-gpu7" }'; } > r.rig
}
run() { "$G" topo --rig r.rig; }
