# D13e (for XML): a directory given as --input is named as a directory.
expect_exit=2
expect_stderr='d: a directory, not an XML file \(for a gathered /sys tree use --root DIR\)'
setup() { mkdir d; }
run() { "$G" topo --input d; }
