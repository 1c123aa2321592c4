# bash completion for gpurig: commands, each command's options (read from its
# --help), rig names (gpurig compare --list), built-in model names (plan's
# error names them), loads, patterns and jobs. Catalog GPU names for --gpu
# are not completed yet.
# Install: share/bash-completion/completions/gpurig (cmake --install does).

_gpurig_words() { # the --help of a command -> its long options
  gpurig "$1" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
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
    --root|--input|--kmsg|--expect|--svg|--dot|--log|--textfile)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    --model)
      local models
      models=$(gpurig plan --model '?' --job infer --gpu 'RTX 3090' 2>&1 | sed -n 's/.*built-in: \([^;]*\);.*/\1/p' | tr -d ',()')
      mapfile -t COMPREPLY < <(compgen -f -W "$models" -- "$cur")
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
  esac
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_gpurig_words "$cmd")" -- "$cur")
  elif [ "$cmd" = compare ]; then
    mapfile -t COMPREPLY < <(compgen -W "$(gpurig compare --list 2>/dev/null | awk 'NF {print $1}')" -- "$cur")
  fi
}
complete -F _gpurig gpurig
