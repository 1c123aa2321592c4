# D14: an infinite window is refused like any other out-of-range value.
# run.sh keeps these from case to case: every case sets all of them
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --xid-window inf: expected hours'
run() { "$G" doctor --xid-window inf --root "$D/trees/doctor-healthy"; }
