# D15: `snapshot out.xml --root DIR` said "unexpected argument '--root'".
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=0
expect_stderr='^gpurig: wrote out\.xml$'
expect_new_files=out.xml
run() { "$G" snapshot out.xml --root "$D/trees/epyc-riser"; }
check() { grep -q '<topology' out.xml; }
