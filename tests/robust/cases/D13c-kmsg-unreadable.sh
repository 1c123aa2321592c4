# D13c: a --kmsg path that cannot be read (here a directory) is an error that
# names the file and the real cause, not "needs root (kernel.dmesg_restrict)"
# and not a skip: exit 3 (the check could not read its input; docs/doctor.md).
expect_exit=3
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=5
setup() { mkdir k.dir; }
run() { "$G" doctor --root "$D/trees/doctor-healthy" --kmsg k.dir; }
check() {
  grep -Eq '^  error +xid.errors +k.dir: a directory, not a file \(--kmsg\); no Xid was checked\.' "$1" &&
    ! grep -q 'dmesg_restrict' "$1"
}
