# The block diagram of 256 GPUs from hwloc XML (N256-gpus-xml.sh's machine):
# topo --svg and --dot finish in time, the SVG is well-formed and draws every
# GPU once, the DOT names every GPU once.
gpus=256
. "$(dirname "${BASH_SOURCE[0]}")/N256-gpus-xml.sh"
expect_new_files="d.svg"
time_limit=20
run() { "$G" topo --input x.xml --svg d.svg >/dev/null && "$G" topo --input x.xml --dot -; }
check() {
  [ "$(grep -o 'data-gpu="GPU[0-9]*"' d.svg | sort -u | wc -l)" = 256 ] || return 1
  [ "$(grep -o 'data-gpu="GPU[0-9]*"' d.svg | wc -l)" = 256 ] || return 1
  [ "$(grep -c '^  n[0-9]* \[label="GPU[0-9]*\\n' "$1")" = 256 ] || return 1
  ! command -v xmllint >/dev/null || xmllint --noout d.svg
}
