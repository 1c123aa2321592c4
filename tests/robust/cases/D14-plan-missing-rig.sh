# D14: --gpus 0 planned on --cpu alone and never opened the rig it was given.
# Now --gpus 0 plans on the rig's CPU, so the rig is read: a missing one fails.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: \./missing\.rig: cannot open: No such file or directory$'
run() { "$G" plan --model llama-2-7b --job infer --gpus 0 --cpu 8x3200 --rig ./missing.rig; }
