# REL-19: burn --log onto a symlink (here to the file outside that must stay untouched): refused
# before the load, one line; the link and its target unchanged.
expect_exit=2
expect_stderr='^gpurig: burn: --log lnk\.jsonl: a symbolic link; gpurig writes only a new file or over a regular file$'
time_limit=10
setup() { ln -s "$OUTSIDE/victim" lnk.jsonl; }
run() { GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=healthy "$G" burn --root "$D/trees/epyc-riser" --duration 60 --log lnk.jsonl; }
check() { [ ! -s "$1" ] && [ -L lnk.jsonl ]; }
