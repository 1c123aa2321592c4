# D5: a million `source` lines (17 MB) parse in one linear pass: the notes
# are appended, not rebuilt (this ran for hours before).
expect_exit=0
expect_stderr_lines=0
expect_stderr=""
expect_new_files=""
time_limit=5
setup() {
  {
    printf 'rig "x"\ncpu c0 "EPYC 7302"\nrootcomplex rc0 c0 gen4\ngpu "RTX 3090" rc0\n'
    awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "source \"s%d\"\n", i }'
  } > r.rig
}
run() { "$G" topo --rig r.rig; }
