# NCCL topology file: a tag left open and followed by 50 MB of blanks is
# refused at the tag, after one pass over the file.
expect_exit=2
expect_stderr='^gpurig: u\.xml:2:3: unterminated tag <cpu> \(the file ends first\)$'
time_limit=10
setup() {
  { printf '<system version="1">\n  <cpu numaid="0"'; head -c 50000000 /dev/zero | tr '\0' ' '; } > u.xml
}
run() { "$G" topo --input u.xml; }
