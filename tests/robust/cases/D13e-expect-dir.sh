# D13e: --expect DIR says what DIR is, not just "read error".
expect_exit=2
expect_stderr='^gpurig: e.dir: a directory, not a file$'
expect_stderr_lines=''
expect_new_files=''
time_limit=5
setup() { mkdir e.dir; }
run() { "$G" doctor --root "$D/trees/doctor-healthy" --expect e.dir; }
