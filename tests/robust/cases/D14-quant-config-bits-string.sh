# D14: bits given as a string was ignored the same way.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: \./config\.json:2: key "bits": must be an integer \(2, 3, 4 or 8\), not a string$'
setup() {
  sed 's/^{/{\n  "quantization_config": {"quant_method": "awq", "bits": "4"},/' \
    "$D/configs/llama-2-7b.json" > config.json
}
run() { "$G" plan --model ./config.json --job infer --gpu 'RTX 3090'; }
