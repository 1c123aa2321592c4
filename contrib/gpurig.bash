# bash completion for gpurig: commands, each command's options (read from its
# --help), rig names (gpurig compare --list), built-in model names and catalog
# GPU names (gpurig plan --list; a GPU's name has spaces: "RTX 3090" is
# offered as RTX\ 3090, or whole inside a quote the word began with), loads,
# patterns and jobs. Every name comes from the gpurig on PATH, so from the data
# directory it reads.
# Install: share/bash-completion/completions/gpurig (cmake --install does).

_gpurig_words() { # the --help of a command -> its long options
  gpurig "$1" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# The names `gpurig plan --list` gives of one kind (model, gpu) that begin
# with the word typed so far, quoted for the command line: backslashes before
# spaces, or as they are when the word opened a quote.
_gpurig_names() { # kind, current word
  local kind=$1 cur=$2 quote= name
  case $cur in
    \"*|\'*) quote=${cur:0:1}; cur=${cur:1} ;;
  esac
  cur=${cur//\\ / }
  while IFS= read -r name; do
    [[ $name == "$cur"* ]] || continue
    if [ -n "$quote" ]; then COMPREPLY+=("$name"); else COMPREPLY+=("$(printf '%q' "$name")"); fi
  done < <(gpurig plan --list 2>/dev/null | sed -n "s/^$kind //p")
}

_gpurig() {
  local cur prev cmd
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  cmd=${COMP_WORDS[1]:-}
  if [ "$COMP_CWORD" -eq 1 ]; then
    local cmds
    cmds=$(gpurig --help 2>/dev/null | awk '/^Commands:/ {on = 1; next} on && /^$/ {on = 0} on && /^  [a-z]/ {print $1}')
    mapfile -t COMPREPLY < <(compgen -W "$cmds --help --version" -- "$cur")
    return
  fi
  case $prev in
    --rig)
      mapfile -t COMPREPLY < <(compgen -W "$(gpurig compare --list 2>/dev/null | awk 'NF {print $1}')" -- "$cur")
      return ;;
    --root|--input|--kmsg|--expect|--svg|--dot|--log|--textfile|--html|--markdown|--bench|--burn)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    --model) # a built-in model, or a config.json
      COMPREPLY=()
      _gpurig_names model "$cur"
      mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    --gpu)
      COMPREPLY=()
      _gpurig_names gpu "$cur"
      return ;;
    --load)
      mapfile -t COMPREPLY < <(compgen -W "gemm pcie p2p allreduce gemm,pcie,p2p,allreduce" -- "$cur")
      return ;;
    --pattern)
      mapfile -t COMPREPLY < <(compgen -W "all staggered per-gpu pairs" -- "$cur")
      return ;;
    --job)
      mapfile -t COMPREPLY < <(compgen -W "infer lora qlora full" -- "$cur")
      return ;;
    --per)
      mapfile -t COMPREPLY < <(compgen -W "gpu node" -- "$cur")
      return ;;
    --like)
      mapfile -t COMPREPLY < <(compgen -W "nvbandwidth" -- "$cur")
      return ;;
  esac
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_gpurig_words "$cmd")" -- "$cur")
  elif [ "$cmd" = compare ]; then
    mapfile -t COMPREPLY < <(compgen -W "$(gpurig compare --list 2>/dev/null | awk 'NF {print $1}')" -- "$cur")
  fi
}
complete -F _gpurig gpurig
