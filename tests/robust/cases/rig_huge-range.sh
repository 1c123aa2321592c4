# A mesh over a range of millions of GPUs is refused at the range, not expanded.
expect_exit=2
expect_stderr='^gpurig: r\.rig:5:13: expected a GPU range such as gpu0-gpu3 after mesh, got "gpu0-gpu99999999"'
setup() { { rig_head; echo 'gpu 2 "A100 SXM4 40GB" rc0'; echo 'nvlink mesh gpu0-gpu99999999'; } > r.rig; }
run() { "$G" topo --rig r.rig; }
