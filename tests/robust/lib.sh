# Helpers for the robustness cases (sourced before each case file).

# tree_with BASE REL KIND: a copy of the fixture tree tests/data/trees/BASE
# in ./t, with the file REL replaced by KIND: fifo (a named pipe), zero (a
# link to /dev/zero), escape (a link to $OUTSIDE/victim, out of the tree) or
# loop (a link to itself).
tree_with() {
  cp -a "$D/trees/$1" t
  local f="t/$2"
  rm -f "$f"
  case $3 in
    fifo) mkfifo "$f" ;;
    zero) ln -s /dev/zero "$f" ;;
    escape) ln -s "$OUTSIDE/victim" "$f" ;;
    loop) ln -s "$(basename "$f")" "$f" ;;
    *) echo "tree_with: unknown kind $3" >&2; return 1 ;;
  esac
}

# The device directory of epyc-riser's GPU0 (behind a riser, x8).
EPYC_GPU0=sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0

# rig_head: the first lines of a one-root-complex rig.
rig_head() { printf 'rig "x"\ncpu c0 "EPYC 7302"\nrootcomplex rc0 c0 gen4\n'; }

# xid_log N: N kernel-log Xid lines, each a distinct (bus address, Xid) group.
xid_log() {
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
    printf "4,%d,%d,-;NVRM: Xid (PCI:%04x:%02x:00): %d, pid=1, name=x, test\n", i, 1000000 + i, int(i / 256), i % 256, 1 + i % 3 }'
}
