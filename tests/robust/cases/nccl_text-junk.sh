# NCCL topology file: a <system> tag followed by 1 MB of bytes 1..255 (no
# NUL): refused at the first byte that cannot start markup.
expect_exit=2
expect_stderr='^gpurig: k\.xml:2:1: text outside a tag'
time_limit=5
setup() {
  { printf '<system version="1">\n'; LC_ALL=C awk 'BEGIN { for (i = 0; i < 1048576; i++) printf "%c", 1 + i % 255 }'; } > k.xml
}
run() { "$G" topo --input k.xml; }
