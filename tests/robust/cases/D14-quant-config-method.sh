# D14: a quant_method gpurig does not plan is refused (unless --quant says how
# to plan it), never planned as bf16.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: \./config\.json: quantization_config quant_method "hqq" is not a weight format gpurig plans; give --quant'
setup() {
  sed 's/^{/{\n  "quantization_config": {"quant_method": "hqq", "nbits": 4},/' \
    "$D/configs/llama-2-7b.json" > config.json
}
run() { "$G" plan --model ./config.json --job infer --gpu 'RTX 3090'; }
