# D13g: 64 GPUs for a 32-layer model said "--pp 64: the model has only 32
# layers" though --pp was not given; the message names what the user gave.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
time_limit=30 # the 64-GPU generic board is opened first: 3 s under ASan
expect_stderr="^gpurig: --gpus 64: with --tp 1 the planner would split llama-2-7b's 32 layers over 64 pipeline stages; give --tp or fewer --gpus$"
run() { "$G" plan --model llama-2-7b --job infer --gpu 'RTX 3090' --gpus 64; }
