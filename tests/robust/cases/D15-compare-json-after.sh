# D15: an option after the rigs was taken as a rig name ("--json: no rig of that name").
expect_stderr= expect_stderr_lines= expect_new_files=
expect_exit=0
expect_stderr_lines=0
run() { "$G" compare wopr tyan-s8030 --json; }
check() { head -n 1 "$1" | grep -q '^{$' && tail -n 1 "$1" | grep -q '^}$' && grep -q '"rigs"' "$1"; }
