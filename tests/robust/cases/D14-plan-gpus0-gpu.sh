# D14: --gpus 0 (CPU inference) with --gpu MODEL (GPUs on a generic board)
# contradict each other.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --gpus 0 plans on the CPU, --gpu RTX 3090 on GPUs: give one of them$'
run() { "$G" plan --model llama-2-7b --job infer --gpus 0 --gpu 'RTX 3090'; }
