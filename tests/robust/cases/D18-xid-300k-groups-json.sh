# D18: the JSON report is bounded like the text one: 20 Xid groups and one
# result for the other 299,980, not 185 MB.
expect_exit=1
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=10
setup() { xid_log 300000 > x.log; }
run() { "$G" doctor --root "$D/trees/doctor-healthy" --kmsg x.log --xid-window 0 --json; }
check() {
  [ "$(wc -c < "$1")" -lt 1000000 ] && grep -q '"299980 more Xid groups' "$1"
}
