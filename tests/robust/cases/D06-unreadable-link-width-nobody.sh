# D6: an unreadable link file (permission denied, as a normal user) is an
# error, not "ok". As root every file is readable whatever its mode, so as
# root the case runs gpurig as nobody (setpriv), with its own copies of the
# binary, the data directory and pci.ids that nobody can reach wherever the
# checkout lies.
expect_exit=3
setup() {
  cp -a "$D/trees/doctor-healthy" t
  mkdir bin && cp "$G" bin/gpurig && cp -r "$GPURIG_DATA" data && cp "$GPURIG_PCI_IDS" pci.ids
  chmod -R o+rX t bin data pci.ids
  chmod 000 "t/sys/devices/pci0000:40/0000:40:03.1/0000:42:00.0/current_link_width"
  chmod o+x "$T" "$(dirname "$T")" "$(dirname "$(dirname "$T")")"
}
run() {
  local as=()
  [ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  "${as[@]}" env GPURIG_DATA="$T/data" GPURIG_PCI_IDS="$T/pci.ids" "$T/bin/gpurig" doctor --root t
}
check() { grep -q 'current_link_width: Permission denied' "$2" && grep -Eq '^ *error +pcie.link-width' "$1"; }
