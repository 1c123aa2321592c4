# D2: gpurig export --textfile never writes through a symlink planted at DIR/gpurig.prom.
expect_exit=2
expect_stderr='gpurig.prom'
time_limit=10
setup() { mkdir d; ln -s "$OUTSIDE/victim" d/gpurig.prom; }
run() { GPURIG_DRIVER_DIR=$STUB "$G" export --once --listen none --textfile d --root "$D/trees/epyc-riser"; }
