# NCCL topology file: 100,000 nested <pci> elements. gpurig's reader keeps
# its own stack (no recursion) and refuses the 65th level, at its line.
expect_exit=2
expect_stderr='^gpurig: deep\.xml:64:1: elements nested more than 64 levels deep'
time_limit=5
setup() {
  awk 'BEGIN { print "<system version=\"1\"><cpu numaid=\"0\">"
               for (i = 0; i < 100000; i++) printf "<pci busid=\"0000:%02x:00.0\">\n", i % 256 }' > deep.xml
}
run() { "$G" topo --input deep.xml; }
