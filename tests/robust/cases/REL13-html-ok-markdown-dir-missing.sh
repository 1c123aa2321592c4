# REL-13: --html into a good place and --markdown into a directory that is
# not there: the Markdown target is refused before the HTML file is written.
expect_exit=2
expect_stderr='^gpurig: nodir/m\.md: cannot write: No such file or directory'
run() { "$G" report --rig wopr --html r.html --markdown nodir/m.md; }
check() { [ ! -e r.html ]; }
