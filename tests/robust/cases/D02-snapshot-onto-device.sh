# D2: a character device node at the target is refused, never replaced. As
# root the case makes its own node (mknod); otherwise it uses /dev/null,
# which a normal user could not replace anyway.
expect_exit=2
expect_stderr='null: a character device; gpurig writes only a new file'
setup() { if [ "$(id -u)" -eq 0 ]; then mknod null c 1 3; else ln -s /dev/null target-is-dev-null; fi; }
run() {
  if [ -c null ]; then "$G" snapshot --root "$D/trees/epyc-riser" null
  else "$G" snapshot --root "$D/trees/epyc-riser" /dev/null; fi
}
check() { [ -c null ] || [ -c /dev/null ]; }
