# D3: a FIFO at proc/meminfo.
expect_exit=2
expect_stderr='proc/meminfo: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" t
  f="t/proc/meminfo"
  rm -f "$f"
  case fifo in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" snapshot out.xml --root t; }
