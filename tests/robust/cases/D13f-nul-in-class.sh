# D13f: a NUL byte in a sysfs attribute is "binary data", not strerror(EILSEQ)
# ("Invalid or incomplete multibyte or wide character").
expect_exit=2
expect_stderr='0000:01:00.0/class: binary data, not text$'
expect_stderr_lines=''
expect_new_files=''
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" tree
  printf '0x03\0000\n' > 'tree/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/class'
}
run() { "$G" topo --root tree; }
