# D11: the same through numa_node.
expect_exit=2
expect_stderr='numa_node: a symbolic link that leads out of the --root tree'
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" t
  f="t/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/numa_node"
  rm -f "$f"
  case escape in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" doctor --root t; }
