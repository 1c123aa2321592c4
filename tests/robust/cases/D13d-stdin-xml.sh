# D13d: hwloc XML piped in through --input /dev/stdin (and -) is read once
# and handed to hwloc as a buffer; it used to say "Document is empty".
expect_exit=0
expect_stderr_lines=0
run() { cat "$D/hwloc/nvidiaDGX2.xml" | "$G" topo --input /dev/stdin > a && "$G" topo --input - < "$D/hwloc/nvidiaDGX2.xml" > b && cat a; }
check() { grep -q 'NVIDIA DGX-2H \[hwloc XML standard input\]' "$1" && diff -q a b >/dev/null; }
expect_new_files='a b'
