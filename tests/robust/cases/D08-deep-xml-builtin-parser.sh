# D8: 20,000 nested bridges overflowed the stack inside libhwloc's own XML
# parser (used where the libxml2 plugin is missing): a bare SIGSEGV. The
# document is now scanned first and refused past 256 levels, whichever
# parser would run.
expect_exit=2
expect_stderr='deep.xml:[0-9]+: elements nested more than 256 levels deep'
time_limit=15
setup() {
  awk 'BEGIN {
    a = "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\""
    print "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">"
    print "<object type=\"Machine\" os_index=\"0\" " a " allowed_cpuset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">"
    print "<object type=\"PU\" os_index=\"0\" " a " gp_index=\"2\"/>"
    for (k = 0; k < 20000; k++)
      printf "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"%d\" bridge_pci=\"0000:[00-ff]\" pci_busid=\"0000:01:00.0\" pci_type=\"0604 [10b5:8796] [0000:0000] ca\">\n", k + 3, k
    for (k = 0; k < 20000; k++) print "</object>"
    print "</object>\n</topology>"
  }' > deep.xml
}
run() { HWLOC_LIBXML_IMPORT=0 "$G" topo --input deep.xml; }
