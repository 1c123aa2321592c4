# D4: --input /dev/zero is a device, refused at once (it used to be read
# until memory ran out).
expect_exit=2
expect_stderr='/dev/zero: a character device, not a regular file'
time_limit=5
run() { "$G" topo --input /dev/zero; }
