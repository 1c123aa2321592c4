#!/usr/bin/env bash
# contrib/gpurig.bash completes commands, options, rigs and models.
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
  printf '%s\n' "${COMPREPLY[@]}" | grep -x -- "$want" >/dev/null || { echo "completion: '$*' does not offer $want: ${COMPREPLY[*]}" >&2; fails=1; }
}
try watch gpurig wa
try burn gpurig bu
try --pattern gpurig burn --pat
try --textfile gpurig export --text
try pairs gpurig burn --pattern pa
try tyan-s8030 gpurig compare ty
try wopr gpurig topo --rig wo
try --dot gpurig topo --do
try llama-3-8b gpurig plan --model llama-3-
try sdxl gpurig plan --model sd
[ $fails = 0 ] && echo "completion: commands, options, rigs, models, patterns offered"
exit $fails
