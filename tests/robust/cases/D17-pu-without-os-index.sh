# D17: a PU whose os_index is misspelt made libhwloc allocate about 512 MB
# for a bitmap (4.6 s, 530 MB RSS) from a 20 KB file; it is refused first.
expect_exit=2
expect_stderr='osi.xml:[0-9]+: a PU object without a valid os_index'
time_limit=5
setup() { sed 's/type="PU" os_index=/type="PU" os_Index=/' "$D/hwloc/24em64t-2n6c2t-pci.xml" > osi.xml; }
run() { "$G" topo --input osi.xml; }
