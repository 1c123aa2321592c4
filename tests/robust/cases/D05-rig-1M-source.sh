# D5: a million `source` lines (17 MB) are refused at the line cap (100,000
# lines; a real rig has under a hundred), at once (this ran for hours before,
# rebuilding the notes string on every line).
expect_exit=2
expect_stderr='^gpurig: r\.rig:100001:1: more than 100000 lines: not a rig file'
time_limit=5
setup() {
  { rig_head; echo 'gpu "RTX 3090" rc0'; awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "source \"s%d\"\n", i }'; } > r.rig
}
run() { "$G" topo --rig r.rig; }
