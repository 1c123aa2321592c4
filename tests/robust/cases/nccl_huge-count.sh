# NCCL topology file: an NVLink count of 10^30 (and one of 10^9) is refused
# with its place, not multiplied into a bandwidth.
expect_exit=2
expect_stderr='^gpurig: c\.xml:5:64: count="1000000000000000000000000000000": expected a whole number from 1 to 64$'
time_limit=5
setup() {
  cat > c.xml <<'XML'
<system version="1">
  <cpu numaid="0">
    <pci busid="0000:01:00.0" class="0x030200" vendor="0x10de" device="0x1db1">
      <gpu dev="0" sm="70" rank="0" gdr="1">
        <nvlink target="0000:02:00.0" tclass="0x030200" count="1000000000000000000000000000000"/>
        <nvlink target="0000:02:00.0" tclass="0x030200" count="1000000000"/>
      </gpu>
    </pci>
  </cpu>
</system>
XML
}
run() { "$G" topo --input c.xml; }
