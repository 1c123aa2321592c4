# The zsh completion (contrib/_gpurig) under stand-ins for zsh's completion
# functions that print what would be offered, one a line: the words to
# complete are this script's arguments, the last one being typed.
# usage: zsh completion_zsh.zsh CONTRIB/_gpurig WORD...   (gpurig on PATH)
compadd() {
  local a
  if [[ $1 == -a ]]; then shift; for a in "$@"; do print -l -- "${(@P)a}"; done
  else print -l -- "$@"; fi
}
_describe() { shift 3; print -l -- "${(@)${(@P)1}%%:*}"; }   # -t TAG DESCR ARRAY: the names before ':'
_files() { print -- "FILES $*"; }
_alternative() {
  local spec action
  for spec in "$@"; do
    action=${spec#*:*:}
    if [[ $action == \(*\) ]]; then print -l -- ${=${action#\(}%\)}; else eval "$action"; fi
  done
}
file=$1
shift
words=(gpurig "$@")
CURRENT=$#words
PREFIX=${words[CURRENT]}
source $file
