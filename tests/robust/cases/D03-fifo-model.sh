# D3: a FIFO given as plan --model (a config.json) is refused at once.
expect_exit=2
expect_stderr='config.json: a FIFO \(named pipe\), not a regular file'
time_limit=5
setup() { mkfifo config.json; }
run() { "$G" plan --model ./config.json --job infer --gpu 'RTX 3090'; }
