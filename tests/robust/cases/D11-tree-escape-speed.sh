# D11: a link out of the tree is refused, and the file it points at is never read or echoed.
expect_exit=2
expect_stderr='current_link_speed: a symbolic link that leads out of the --root tree'
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" t
  f="t/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/current_link_speed"
  rm -f "$f"
  case escape in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" topo --root t; }
