# D12: an escape sequence in a sysfs value reaches the terminal as visible
# text (\x1b), never as a control character.
expect_exit=1
setup() {
  cp -a "$D/trees/epyc-riser" t
  printf '\033[2J\033]0;pwned\007 8 GT/s\n' > "t/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/current_link_speed"
}
run() { "$G" topo --root t; }
check() {
  grep -q 'unrecognised link speed "\\x1b\[2J\\x1b\]0;pwned\\x07 8 GT/s"' "$2" &&
    ! LC_ALL=C grep -q "$(printf '[\033\007]')" "$1" "$2"
}
