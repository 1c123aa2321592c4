# D3: a FIFO at the SMBIOS table doctor reads.
expect_exit=2
expect_stderr='DMI: a FIFO \(named pipe\) in a gathered tree'
time_limit=10
setup() {
  cp -a "$D/trees/doctor-healthy" t
  f="t/sys/firmware/dmi/tables/DMI"
  rm -f "$f"
  case fifo in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
  esac
}
run() { "$G" doctor --root t; }
