# D15: `--` ends the options, so a file name may start with a dash.
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=0
expect_stderr='^gpurig: wrote -dash\.xml$'
expect_new_files=-dash.xml
run() { "$G" snapshot --root "$D/trees/epyc-riser" -- -dash.xml; }
check() { grep -q '<topology' ./-dash.xml; }
