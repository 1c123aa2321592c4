# D3: a symlink loop in the tree gives one line and exit 2, at once.
expect_exit=2
expect_stderr='class: a loop of symbolic links'
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" t
  f="t/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/class"
  rm -f "$f"
  case loop in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" topo --root t; }
