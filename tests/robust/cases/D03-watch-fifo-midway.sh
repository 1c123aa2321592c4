# D3: an AER counter that becomes a FIFO (or a link out of the tree) while gpurig watch samples
# is read as unknown, never waited on or followed: the samples go on and end in time.
expect_exit=1 # the stand-in GPU1 counts PCIe replays: a warning
expect_stderr_lines=0
time_limit=15
setup() { cp -a "$D/trees/epyc-riser" t; }
run() {
  ( sleep 0.4; f=t/sys/devices/pci0000:00/0000:00:03.1/aer_dev_correctable; rm -f "$f"; mkfifo "$f"
    g=t/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/aer_dev_correctable; rm -f "$g"; ln -s "$OUTSIDE/victim" "$g" ) &
  GPURIG_DRIVER_DIR=$STUB "$G" watch --count 6 --interval 0.2 --root t
  local r=$?
  wait
  return $r
}
check() { [ "$(grep -c 'link GPU1' "$1")" -ge 1 ]; }
