# D6: an unreadable link file (permission denied, as a normal user) is an
# error, not "ok". As root the file is readable whatever its mode, so the
# case runs gpurig as nobody through setpriv when it is root.
expect_exit=3
setup() {
  cp -a "$D/trees/doctor-healthy" t
  chmod 000 "t/sys/devices/pci0000:40/0000:40:03.1/0000:42:00.0/current_link_width"
  chmod -R o+rX t; chmod 000 "t/sys/devices/pci0000:40/0000:40:03.1/0000:42:00.0/current_link_width"
  chmod o+x "$T" "$(dirname "$T")" "$(dirname "$(dirname "$T")")"
}
run() {
  if [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups env GPURIG_DATA="$GPURIG_DATA" GPURIG_PCI_IDS="$GPURIG_PCI_IDS" "$G" doctor --root t
  else
    "$G" doctor --root t
  fi
}
check() { grep -q 'current_link_width: Permission denied' "$2" && grep -Eq '^ *error +pcie.link-width' "$1"; }
