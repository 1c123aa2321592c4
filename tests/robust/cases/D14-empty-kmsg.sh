# D14: --kmsg '' would mean /dev/kmsg, like an empty --root means this machine.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr="^gpurig: doctor: option '--kmsg' needs a kernel log file"
run() { "$G" doctor --root "$D/trees/doctor-healthy" --kmsg=; }
