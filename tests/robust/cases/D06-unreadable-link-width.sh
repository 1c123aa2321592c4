# D6: a link file that holds binary data (a NUL byte) is an error naming the
# file, like malformed text; doctor used to say "ok pcie.link-width", exit 0.
expect_exit=3
setup() {
  cp -a "$D/trees/doctor-healthy" t
  printf '16\0' > "t/sys/devices/pci0000:40/0000:40:03.1/0000:42:00.0/current_link_width"
}
run() { "$G" doctor --root t; }
check() {
  grep -q 'current_link_width: binary data, not text' "$2" &&
    grep -Eq '^ *error +pcie.link-width' "$1" && ! grep -Eq '^ *ok +pcie.link-width' "$1"
}
