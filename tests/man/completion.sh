#!/usr/bin/env bash
# contrib/gpurig.bash and contrib/_gpurig (zsh) complete commands, options,
# rigs, models and catalog GPUs (names with spaces quoted).
# usage: completion.sh GPURIG   (env: GPURIG_DATA)
set -uo pipefail
gpurig=$1
PATH=$(cd "$(dirname "$gpurig")" && pwd):$PATH
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$here/../../contrib/gpurig.bash"
fails=0
try() { # want, words...
  local want=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _gpurig
  printf '%s\n' "${COMPREPLY[@]}" | grep -Fx -- "$want" >/dev/null || { echo "completion: '$*' does not offer $want: ${COMPREPLY[*]}" >&2; fails=1; }
}
try watch gpurig wa
try burn gpurig bu
try --pattern gpurig burn --pat
try --textfile gpurig export --text
try --markdown gpurig report --mark
try pairs gpurig burn --pattern pa
try --mpi gpurig bench --mp
try node gpurig bench --mpi --per no
try --like gpurig bench --li
try nvbandwidth gpurig bench --like nv
try tyan-s8030 gpurig compare ty
try wopr gpurig topo --rig wo
try --dot gpurig topo --do
try llama-3-8b gpurig plan --model llama-3-
try sdxl gpurig plan --model sd
# a GPU's name has a space: escaped, or whole inside the quote the word opened
try 'RTX\ 3090' gpurig plan --gpu RTX
try 'RTX\ 3090\ Ti' gpurig compare --gpu 'RTX\ 3090\ '
try 'V100 PCIe 32GB' gpurig compare --gpu '"V100'
try 'RTX\ 2080\ Ti' gpurig plan --gpu 'RTX\ 20'
try 'MI300X' gpurig plan --gpu MI3
try llama-2-7b gpurig plan --model llama-2

# zsh: the same questions through contrib/_gpurig
command -v zsh >/dev/null || { echo "completion: zsh is not installed (setup.sh installs it)" >&2; exit 1; }
ztry() { # want, words after gpurig (the last is being typed)
  local want=$1 got
  shift
  got=$(timeout 30 zsh "$here/completion_zsh.zsh" "$here/../../contrib/_gpurig" "$@" 2>&1)
  grep -Fx -- "$want" >/dev/null <<<"$got" || { echo "zsh completion: 'gpurig $*' does not offer $want: $got" >&2; fails=1; }
}
ztry topo to
ztry --help --
ztry --pattern burn --pat
ztry pairs burn --pattern pa
ztry nvbandwidth bench --like nv
ztry wopr topo --rig wo
ztry tyan-s8030 compare ty
ztry llama-3-8b plan --model llama-3-
ztry sdxl-base-1.0 plan --model sd
ztry 'RTX 3090' plan --gpu RTX
ztry 'V100 PCIe 32GB' compare --gpu V100
ztry 'RTX 4060 Ti 16GB' plan --gpu 'RTX 406'
ztry --json compare --js
ztry 'FILES -/' topo --root ''
# and what it must not offer: another command's option, a GPU for --model
zgot=$(timeout 30 zsh "$here/completion_zsh.zsh" "$here/../../contrib/_gpurig" topo --mod 2>&1)
grep -x -- --model >/dev/null <<<"$zgot" && { echo "zsh completion: topo offers plan's --model" >&2; fails=1; }
zgot=$(timeout 30 zsh "$here/completion_zsh.zsh" "$here/../../contrib/_gpurig" plan --model R 2>&1)
grep -x -- 'RTX 3090' >/dev/null <<<"$zgot" && { echo "zsh completion: --model offers a GPU" >&2; fails=1; }
[ $fails = 0 ] && echo "completion: bash and zsh offer commands, options, rigs, models, GPUs, patterns"
exit $fails
