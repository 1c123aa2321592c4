# D7/D3: a FIFO given as --kmsg is refused at once (never waited on), and the
# xid.errors result says so: an error naming the file, exit 3.
expect_exit=3
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=5
setup() { mkfifo k.fifo; }
run() { COLUMNS=10000 "$G" doctor --verbose --root "$D/trees/doctor-healthy" --kmsg k.fifo; }
check() { grep -Eq '^  error +xid.errors +k.fifo: a FIFO \(named pipe\), not a regular file.*no Xid was checked' "$1"; }
