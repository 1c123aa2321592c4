# D14: topo's --gpu fills a rig's slots; with an XML file it was ignored.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: topo: --gpu MODEL fills the GPU slots of a --rig; without one there is nothing to apply it to'
run() { "$G" topo --gpu 'RTX 3090' --input "$D/hwloc/nvidiaDGX2.xml"; }
