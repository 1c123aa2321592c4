# D14: strtod reads "nan", which passed both range tests and meant the whole log.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr='^gpurig: --xid-window nan: expected hours, a number from 0 to'
run() { "$G" doctor --xid-window nan --root "$D/trees/doctor-healthy"; }
