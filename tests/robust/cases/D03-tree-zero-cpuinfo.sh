# D3: proc/cpuinfo linked to /dev/zero: libhwloc would read it forever.
expect_exit=2
expect_stderr='proc/cpuinfo: a symbolic link that leads out of the --root tree \(to /dev/zero\)'
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" t
  f="t/proc/cpuinfo"
  rm -f "$f"
  case zero in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" topo --root t; }
