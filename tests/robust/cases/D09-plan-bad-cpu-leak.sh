# D9: a bad --cpu after the machine would be loaded. Every plan argument is now
# checked before anything is loaded; under the ASan binary a leak would add
# LeakSanitizer's report to stderr and change the exit status.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --cpu 8x: expected CHANNELSxMT/s'
run() { "$G" plan --model llama-2-7b --job infer --gpu 'RTX 3090' --cpu 8x; }
