# D4: an endless standard input stops at the cap (64 MiB), checked while
# reading, not after: `--input -` from /dev/zero.
expect_exit=2
expect_stderr='^gpurig: -: larger than 64 MiB'
time_limit=10
run() { "$G" topo --input - < /dev/zero; }
