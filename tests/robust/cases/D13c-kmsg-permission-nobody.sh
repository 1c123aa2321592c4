# D13c: a --kmsg file the user may not read is an error naming the file and
# the real cause, not "needs root (kernel.dmesg_restrict)" and exit 0. Run
# as nobody (setpriv) when root, with its own copies of the binary and data.
expect_exit=3
setup() {
  mkdir bin && cp "$G" bin/gpurig && cp -r "$GPURIG_DATA" data && cp "$GPURIG_PCI_IDS" pci.ids
  cp "$D/kmsg/xid-79-13.log" k.log && chmod 600 k.log
  chmod -R o+rX bin data pci.ids
  chmod o+x "$T" "$(dirname "$T")" "$(dirname "$(dirname "$T")")"
}
run() {
  local as=()
  [ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  "${as[@]}" env GPURIG_DATA="$T/data" GPURIG_PCI_IDS="$T/pci.ids" "$T/bin/gpurig" doctor --root "$D/trees/doctor-healthy" --kmsg k.log
}
check() { grep -q 'k.log: cannot open: Permission denied' "$1" && ! grep -q 'dmesg_restrict' "$1"; }
