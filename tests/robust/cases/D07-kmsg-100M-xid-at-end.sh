# D7: a --kmsg log over the 64 MiB cap is read from its end, so an Xid 79 on
# the last line of a 108 MiB log is found (fail, exit 2), and the report says
# how much of the log was not read.
expect_exit=2
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=20
setup() {
  awk 'BEGIN { for (i = 0; i < 960000; i++) print "6,1847,85412877001,-;perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79750" }' > k.log
  printf '%s\n' "4,1851,99000123456,-;NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." >> k.log
}
run() { COLUMNS=10000 "$G" doctor --verbose --root "$D/trees/doctor-healthy" --kmsg k.log --xid-window 0; }
check() {
  grep -Eq '^  fail +xid.errors +GPU0 0000:01:00.0: Xid 79 ' "$1" &&
    grep -Eq 'k.log: the first 44(\.[0-9])? MiB were not read: the newest 64 MiB were' "$1"
}
