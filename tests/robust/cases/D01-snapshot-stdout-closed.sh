# D1/D2: with standard output closed (`>&-`), the writer's temporary file
# must not become fd 1 and receive what is printed: the closed descriptor is
# held by /dev/null, so the snapshot is whole XML and nothing else.
expect_exit=0
expect_stderr='wrote snap.xml'
expect_new_files='snap.xml'
run() { "$G" snapshot --root "$D/trees/epyc-riser" snap.xml >&-; }
check() { head -c 5 snap.xml | grep -q '<?xml' && tail -c 12 snap.xml | grep -q '</topology>'; }
