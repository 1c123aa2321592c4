# 64 GPUs from hwloc XML through topo and report: N256-gpus-xml.sh at a
# smaller size.
gpus=64
. "$(dirname "${BASH_SOURCE[0]}")/N256-gpus-xml.sh"
