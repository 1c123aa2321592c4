# A PCI bus has 32 device numbers: the 33rd `direct` device of one root complex is refused,
# naming its own line.
expect_exit=2
expect_stderr="^gpurig: r\.rig:5:1: no device number left on the bus of 'rc0' \(a PCI bus has 32"
setup() { { rig_head; echo 'gpu 32 "A100 SXM4 40GB" rc0 direct'; echo 'nvme rc0 direct'; } > r.rig; }
run() { "$G" topo --rig r.rig; }
