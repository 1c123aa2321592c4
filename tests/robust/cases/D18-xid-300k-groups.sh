# D18: 300,000 distinct (bus address, Xid) groups are grouped in linear time
# (a hash table) and the report lists 20 of them, then one line for the rest.
expect_exit=1
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=10
setup() { xid_log 300000 > x.log; }
run() { COLUMNS=10000 "$G" doctor --verbose --root "$D/trees/doctor-healthy" --kmsg x.log --xid-window 0; }
check() {
  [ "$(wc -c < "$1")" -lt 1000000 ] &&
    [ "$(grep -Ec '^  warn +xid.errors +(GPU|PCI)' "$1")" -eq 20 ] &&
    grep -Eq '^  warn +xid.errors +299980 more Xid groups .* are not listed' "$1"
}
