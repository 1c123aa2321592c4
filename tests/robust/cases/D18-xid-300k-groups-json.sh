# D18: the JSON report is bounded like the text one: 20 Xid groups and one
# result for the other 299,980, not 185 MB.
# (every expect_* is set, even empty: run.sh would keep an earlier case's value)
expect_exit=1
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=10
setup() {
  awk 'BEGIN { for (i = 0; i < 300000; i++)
    printf "4,%d,%d,-;NVRM: Xid (PCI:%04x:%02x:00): %d, pid=1, name=x, test\n", i, 1000000 + i, int(i / 256), i % 256, 1 + i % 3 }' > x.log
}
run() { "$G" doctor --root "$D/trees/doctor-healthy" --kmsg x.log --xid-window 0 --json; }
check() {
  [ "$(wc -c < "$1")" -lt 1000000 ] && grep -q '"299980 more Xid groups' "$1"
}
