# D12: a rig's name with an escape sequence (and a C1 control, U+009B) is
# printed with the controls escaped, in text; JSON escapes them itself.
expect_exit=0
setup() {
  sed "s/^rig .*/rig \"a$(printf '\033')]0;pwned$(printf '\007')b$(printf '\302\233')c\"/" "$GPURIG_DATA/rigs/tinybox-green.rig" > r.rig
}
run() { "$G" topo --rig ./r.rig && "$G" topo --json --rig ./r.rig > j; }
expect_new_files='j'
check() {
  grep -q 'a\\x1b\]0;pwned\\x07b\\u009bc' "$1" && ! LC_ALL=C grep -q "$(printf '[\033\007]')" "$1" j &&
    grep -qi 'a\\u001b\]0;pwned\\u0007b' j
}
