# D14: compare --job ignored a --cpu that plan refuses; one parser now judges it
# for both, before any rig is read.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --cpu 8x: expected CHANNELSxMT/s'
run() { "$G" compare --job infer --model llama-2-70b --cpu 8x wopr; }
