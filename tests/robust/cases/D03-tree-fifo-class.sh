# D3: a FIFO at a device's class file.
expect_exit=2
expect_stderr='class: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() {
  cp -a "$D/trees/epyc-riser" t
  f="t/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/class"
  rm -f "$f"
  case fifo in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" doctor --root t; }
