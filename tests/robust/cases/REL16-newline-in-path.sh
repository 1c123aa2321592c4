# REL-16: a newline in a path (a --textfile directory that is missing, an
# --svg directory, a --rig file) is printed escaped: each error is one line.
expect_exit=2
expect_stderr_lines=3
check() {
  grep -qx 'gpurig: no\\nsuch/gpurig\.prom: cannot write: No such file or directory' "$2" &&
    grep -qx 'gpurig: watch: --svg no\\nsuch/c\.svg: no\\nsuch: no such directory' "$2" &&
    grep -q '^gpurig: --rig a\\nb\.rig: no such file' "$2"
}
run() {
  export GPURIG_DRIVER_DIR=$STUB GPURIG_STUB_SCENARIO=4gpu
  "$G" export --root "$D/trees/epyc-riser" --listen none --textfile $'no\nsuch' --once
  "$G" watch --root "$D/trees/epyc-riser" --once --svg $'no\nsuch/c.svg'
  "$G" topo --rig $'a\nb.rig'
}
