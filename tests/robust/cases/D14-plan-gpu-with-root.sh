# D14: plan's --gpu builds a generic board, which silently replaced a --root tree.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --gpu MODEL plans on a generic board of that GPU, so the machine of --root .* would be ignored'
run() { "$G" plan --model llama-2-7b --job infer --gpu 'RTX 3090' --root "$D/trees/epyc-riser"; }
