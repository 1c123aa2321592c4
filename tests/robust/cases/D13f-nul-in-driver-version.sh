# D13f/D6: a NUL byte in a file a doctor check depends on is an error result
# naming the file and "binary data", not a missing file (which would have
# said "no NVIDIA driver loaded") and not strerror(EILSEQ).
expect_exit=3
expect_stderr=''
expect_stderr_lines=0
expect_new_files=''
time_limit=10
setup() {
  cp -a "$D/trees/doctor-healthy" tree
  printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03\0\n' > tree/proc/driver/nvidia/version
}
run() { "$G" doctor --root tree; }
check() {
  grep -Eq '^  error +driver.version +tree/proc/driver/nvidia/version: binary data, not text\.' "$1" &&
    ! grep -q 'no NVIDIA driver loaded' "$1"
}
