# D2: `-` (and /dev/stdout) write the XML on standard output, replacing nothing.
expect_exit=0
expect_stderr='wrote'
run() { "$G" snapshot --root "$D/trees/epyc-riser" /dev/stdout; }
check() { head -c 5 "$1" | grep -q '<?xml'; }
