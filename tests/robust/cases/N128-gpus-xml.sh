# 128 GPUs from hwloc XML through topo and report: N256-gpus-xml.sh at a
# smaller size.
gpus=128
. "$(dirname "${BASH_SOURCE[0]}")/N256-gpus-xml.sh"
