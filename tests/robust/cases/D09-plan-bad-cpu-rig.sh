# D9: the same with a rig file as the machine (the review's other leaking sources).
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --cpu x3200: expected CHANNELSxMT/s'
run() { "$G" plan --model llama-2-7b --job infer --rig tyan-s8030 --cpu x3200; }
