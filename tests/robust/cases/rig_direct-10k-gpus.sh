# `direct` GPUs take no bus of their own, yet each counts against the PCI domain's 255 like one,
# so a rig of 10,000 of them (one root complex per 30) is refused at the line that goes over,
# and no rig grows past what the analysis handles.
expect_exit=2
expect_stderr='^gpurig: r\.rig:[0-9]+:1: too many devices for one PCI domain \(at most 255'
time_limit=5
setup() {
  { printf 'rig "x"\ncpu c0 "EPYC 7302"\n'
    awk 'BEGIN { for (i = 0; i < 10000; i++) { if (i % 30 == 0) printf "rootcomplex r%d c0 gen4\n", i / 30;
                 printf "gpu \"A100 SXM4 40GB\" r%d direct\n", int(i / 30) } }'; } > r.rig
}
run() { "$G" topo --rig r.rig; }
