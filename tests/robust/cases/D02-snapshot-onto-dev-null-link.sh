# D2: `snapshot /dev/null`-like targets: a symlink to a device stays a symlink.
expect_exit=2
expect_stderr='null: a symbolic link; gpurig writes only a new file'
setup() { ln -s /dev/null null; }
run() { "$G" snapshot --root "$D/trees/epyc-riser" null; }
check() { [ -L null ] && [ "$(readlink null)" = /dev/null ]; }
