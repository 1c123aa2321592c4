# REL-19: burn --svg into a directory that is not there: refused before the load (the 60 s run never
# starts: the time limit holds it), one line, nothing on stdout.
expect_exit=2
expect_stderr='^gpurig: burn: --svg nodir/x\.svg: cannot write: No such file or directory$'
time_limit=10
run() { GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=healthy "$G" burn --root "$D/trees/epyc-riser" --duration 60 --svg nodir/x.svg; }
check() { [ ! -s "$1" ]; }
