# Many GPUs from hwloc XML, where the rig format's 255-bus cap does not
# apply: topo and report analyse and predict 256 GPUs (2 sockets, PEX
# switches of 8 GPUs, 8 switches per PCI domain) without a crash. Before the
# ring search took any GPU count, 128 GPUs wrote past a 64-int array and 256
# died of SIGSEGV. N064 and N128 source this file with gpus set.
gpus=${gpus:-256}
expect_exit=0
expect_stderr_lines=0
expect_stderr=""
expect_new_files=""
time_limit=20
setup() {
  awk -v n="$gpus" -v s=8 'BEGIN {
    a = "cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x3\" complete_nodeset=\"0x3\""
    print "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">"
    print "<object type=\"Machine\" os_index=\"0\" " a " allowed_cpuset=\"0x3\" allowed_nodeset=\"0x3\" gp_index=\"1\">"
    gp = 10; dom = 0; rp = "0604 [8086:340e] [0000:0000] 13"; sw = "0604 [10b5:c010] [0000:0000] 01"
    for (p = 0; p < 2; p++) {
      m = 2 ^ p
      c = sprintf("cpuset=\"0x%x\" complete_cpuset=\"0x%x\" nodeset=\"0x%x\" complete_nodeset=\"0x%x\"", m, m, m, m)
      printf "<object type=\"Package\" os_index=\"%d\" %s gp_index=\"%d\">\n", p, c, gp++
      print "<info name=\"CPUVendor\" value=\"GenuineIntel\"/>"
      printf "<object type=\"NUMANode\" os_index=\"%d\" %s gp_index=\"%d\" local_memory=\"1073741824\"/>\n", p, c, gp++
      printf "<object type=\"PU\" os_index=\"%d\" %s gp_index=\"%d\"/>\n", p, c, gp++
      for (left = n / 2; left > 0; dom++) {
        printf "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"%04x:[00-ff]\">\n", gp++, dom
        bus = 1
        for (w = 0; w < 8 && left > 0; w++) {
          k = left < s ? left : s; left -= k
          printf "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"%04x:[%02x-%02x]\" pci_busid=\"%04x:00:%02x.0\" pci_type=\"%s\" pci_link_speed=\"31.5\">\n", gp++, dom, bus, bus + k + 1, dom, w + 1, rp
          up = bus++
          printf "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"2\" bridge_pci=\"%04x:[%02x-%02x]\" pci_busid=\"%04x:%02x:00.0\" pci_type=\"%s\" pci_link_speed=\"31.5\">\n", gp++, dom, bus, bus + k, dom, up, sw
          dn = bus++
          for (i = 0; i < k; i++) {
            printf "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"3\" bridge_pci=\"%04x:[%02x-%02x]\" pci_busid=\"%04x:%02x:%02x.0\" pci_type=\"%s\" pci_link_speed=\"31.5\">\n", gp++, dom, bus, bus, dom, dn, i, sw
            printf "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"%04x:%02x:00.0\" pci_type=\"0302 [10de:20b5] [10de:1533] a1\" pci_link_speed=\"31.5\"/>\n</object>\n", gp++, dom, bus++
          }
          print "</object>\n</object>"
        }
        print "</object>"
      }
      print "</object>"
    }
    print "</object>\n</topology>"
  }' > x.xml
}
run() { "$G" topo --input x.xml && "$G" report --input x.xml; }
check() { grep -q "^2 sockets, 2 NUMA nodes, $gpus GPUs" "$1"; }
