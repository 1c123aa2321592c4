# D5: a rig with 25,000 `source` lines parses at once. Each line used to
# rebuild the whole notes string (quadratic: 4.3 s here, 8.9 s in the review);
# the notes now grow by doubling. Well under a second; the limit leaves room
# for a slow CI machine.
expect_exit=0
expect_stderr_lines=0
expect_stderr=""
expect_new_files=""
time_limit=3
setup() {
  {
    printf 'rig "x"\ncpu c0 "EPYC 7302"\nrootcomplex rc0 c0 gen4\ngpu "RTX 3090" rc0\n'
    awk 'BEGIN { for (i = 0; i < 25000; i++) printf "source \"s%d\"\n", i }'
  } > r.rig
}
run() { "$G" topo --rig r.rig; }
