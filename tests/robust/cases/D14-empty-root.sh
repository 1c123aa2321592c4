# D14: --root '' (an unset $DIR) inspected the live machine without a word.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=2
expect_stderr="^gpurig: topo: option '--root' needs a directory \(an empty value would mean this machine; omit --root for that\)$"
run() { "$G" topo --root ''; }
