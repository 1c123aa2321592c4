# NCCL topology file: a <system> tag followed by 1 MB of every byte value
# (NUL included) is one error with its place, not a crash or garbage on the
# terminal.
expect_exit=2
expect_stderr='^gpurig: j\.xml:2:1: binary data \(NUL byte\): not an NCCL topology file$'
time_limit=5
setup() {
  { printf '<system version="1">\n'; LC_ALL=C awk 'BEGIN { for (i = 0; i < 1048576; i++) printf "%c", i % 256 }'; } > j.xml
}
run() { "$G" topo --input j.xml; }
