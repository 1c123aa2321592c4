# D3: a FIFO or a link to /dev/zero placed at ANY file of a --root tree gives
# one line naming it and exit 2 at once: each of the tree's files in turn is
# replaced (then put back); doctor and topo with a FIFO, topo with the link;
# each run must end within 5 s.
expect_exit=0
expect_stderr_lines=0
time_limit=300
setup() { cp -a "$D/trees/doctor-healthy" t; }
# refused CMD FILE WORDS: one run must exit 2 with one line naming FILE and WORDS
refused() {
  timeout -k 1 5 "$G" "$1" --root t > /dev/null 2> err.txt
  local rc=$? line
  line=$(cat err.txt)
  if [ $rc -ne 2 ] || [ "$(wc -l < err.txt)" -ne 1 ] || [[ $line != *"${2#t/}: $3"* ]]; then
    echo "$1 with $3 at $2: exit $rc: $line" >&2
    return 1
  fi
}
run() {
  local n=0 f
  while IFS= read -r f; do
    mv "$f" "$f.keep" && mkfifo "$f"
    refused topo "$f" "a FIFO (named pipe) in a gathered tree" || return 1
    refused doctor "$f" "a FIFO (named pipe) in a gathered tree" || return 1
    rm "$f" && ln -s /dev/zero "$f"
    refused topo "$f" "a symbolic link that leads out of the --root tree (to /dev/zero)" || return 1
    rm "$f" && mv "$f.keep" "$f"
    n=$((n + 1))
  done < <(find t -type f | sort)
  rm -f err.txt
  echo "$n files, each a FIFO and a /dev/zero link in turn: refused at once"
}
check() { grep -Eq '^[0-9]+ files, each a FIFO and a /dev/zero link in turn' "$1"; }
