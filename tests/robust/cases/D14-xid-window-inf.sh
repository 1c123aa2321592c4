# D14: an infinite window is refused like any other out-of-range value.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --xid-window inf: expected hours'
run() { "$G" doctor --xid-window inf --root "$D/trees/doctor-healthy"; }
