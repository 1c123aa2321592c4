# D3: proc/hwloc-nofile-info linked to /dev/zero.
expect_exit=2
expect_stderr='hwloc-nofile-info: a symbolic link that leads out of the --root tree'
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" t
  f="t/proc/hwloc-nofile-info"
  rm -f "$f"
  case zero in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" report --root t; }
