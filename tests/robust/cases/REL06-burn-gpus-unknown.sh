# REL-06: burn --gpus naming a GPU the driver does not have: refused before anything runs, one
# line naming the index and the GPUs there are.
expect_exit=2
expect_stderr='^gpurig: burn: --gpus 0,9: GPU 9: the driver sees 4 GPUs \(0-3\)$'
time_limit=10
run() { GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=healthy "$G" burn --root "$D/trees/epyc-riser" --gpus 0,9; }
check() { [ ! -s "$1" ]; }
