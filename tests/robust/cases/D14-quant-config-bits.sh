# D14: a GPTQ quantization_config with bits -4 was ignored and the model
# planned as bf16; it is an error naming the file, line and key.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: \./config\.json:2: key "bits": -4: gptq checkpoints have 2, 3, 4 or 8 bits$'
setup() {
  sed 's/^{/{\n  "quantization_config": {"quant_method": "gptq", "bits": -4, "group_size": 128},/' \
    "$D/configs/llama-2-7b.json" > config.json
}
run() { "$G" plan --model ./config.json --job infer --gpu 'RTX 3090'; }
