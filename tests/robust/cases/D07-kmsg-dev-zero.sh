# D7/D4: --kmsg /dev/zero is refused at once: the log is read from its end,
# and an endless device has none, so only /dev/kmsg is read as a device.
expect_exit=3
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=5
run() { COLUMNS=10000 "$G" doctor --verbose --root "$D/trees/doctor-healthy" --kmsg /dev/zero; }
check() { grep -Eq '^  error +xid.errors +/dev/zero: a character device, not a regular file.*no Xid was checked' "$1"; }
