# NCCL topology file: a million <pci> elements (NCCL itself reads at most 256
# per machine) are refused at the first past gpurig's limit of 16,384.
expect_exit=2
expect_stderr='^gpurig: m\.xml:[0-9]+:[0-9]+: more than 16384 elements'
time_limit=5
setup() {
  awk 'BEGIN { print "<system version=\"1\">"
               for (c = 0; c < 4000; c++) {
                 printf "<cpu numaid=\"%d\">\n", c
                 for (i = 0; i < 250; i++) printf "<pci busid=\"%04x:%02x:00.0\"/>\n", c, i
                 print "</cpu>" }
               print "</system>" }' > m.xml
}
run() { "$G" topo --input m.xml; }
