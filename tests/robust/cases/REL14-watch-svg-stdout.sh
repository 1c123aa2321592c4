# REL-14: watch --svg - would append the chart to the JSON lines on standard
# output; it is refused before the first sample, and nothing is printed there.
expect_exit=2
expect_stderr='^gpurig: watch: --svg -: standard output carries the samples; give the chart a file$'
run() { GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=4gpu "$G" watch --root "$D/trees/epyc-riser" --count 2 --interval 0.1 --json --svg -; }
check() { [ ! -s "$1" ]; }
