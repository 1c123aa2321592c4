#!/bin/sh
# The include rule between gpurig's source layers (tests/layers/layers.txt).
#
# The table is a graph: each line "LAYER: DEP DEP ..." names a layer and the
# layers it may include. A layer may name only layers listed before it (the
# graph has no cycle and the table reads bottom-up); a table that breaks this
# is refused as a whole.
#
# For every .c and .h file under SRC/LAYER/ and every quoted include in it
# (#include "..."):
#   - the include must be folder-qualified, "LAYER/name.h". A bare "name.h"
#     is an error even when name.h sits in the same folder: one spelling per
#     header, so that grep "load/rig.h" finds every user;
#   - its first folder must be a layer of the table, and the header must exist
#     under SRC/;
#   - that layer must be the including file's own layer or one its line
#     names. An include of a higher layer says so; an include of a lower
#     layer the line does not name (doctor including backends/) names the
#     layers it may include.
# Every folder directly under SRC/ must be a layer of the table, and no source
# file may sit directly in SRC/. Angle-bracket includes (<hwloc.h>) are not
# checked. Lines are matched as written: an include inside #if 0 or inside a
# /* */ comment spanning lines still counts.
#
# usage: check_layers.sh TABLE SRC
# Prints one line per violation, FILE:LINE first, and exits 1; exits 0 with a
# one-line summary when there is none; exits 2 on a bad table or arguments.
set -u
[ $# -eq 2 ] || { echo "usage: check_layers.sh TABLE SRC" >&2; exit 2; }
table=$1 src=${2%/}
[ -r "$table" ] || { echo "check_layers: cannot read table $table" >&2; exit 2; }
[ -d "$src" ] || { echo "check_layers: no source folder $src" >&2; exit 2; }

# Every regular file under SRC, as a path relative to SRC, one per line.
list=$(cd "$src" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) || exit 2
# The folders directly under SRC.
dirs=$(cd "$src" && for d in */; do [ -d "$d" ] && printf '%s\n' "${d%/}"; done)

printf '%s\n' "$list" | LC_ALL=C awk -v src="$src" -v table="$table" -v dirs="$dirs" '
function fail(msg) { print msg; bad++ }
BEGIN {
  # The table: "LAYER: DEP ..." on each line that is not blank or a comment.
  n = 0; nedge = 0
  while ((r = (getline line < table)) > 0) {
    sub(/#.*/, "", line)
    sub(/^[ \t]+/, "", line)
    if (line == "") continue
    c = index(line, ":")
    if (c == 0) { tablebad = "\"" line "\" is not \"LAYER: THE LAYERS IT MAY INCLUDE\""; break }
    name = substr(line, 1, c - 1)
    sub(/[ \t]+$/, "", name)
    if (name !~ /^[a-z0-9_]+$/) { tablebad = "bad layer name \"" name "\""; break }
    if (name in rank) { tablebad = "layer " name " listed twice"; break }
    rank[name] = ++n
    order[n] = name
    deps[name] = ""
    nw = split(substr(line, c + 1), w, /[ \t]+/)
    for (i = 1; i <= nw; i++) {
      if (w[i] == "") continue
      if (w[i] == name) { tablebad = "layer " name " names itself (its own headers are always allowed)"; break }
      if (!(w[i] in rank)) {
        tablebad = "layer " name " may include " w[i] ", which is not a layer listed before it"
        break
      }
      if ((name SUBSEP w[i]) in may) continue
      may[name, w[i]] = 1
      deps[name] = deps[name] " " w[i]
      nedge++
    }
    if (tablebad != "") break
  }
  if (r < 0) tablebad = "cannot read it"
  else if (n == 0 && tablebad == "") tablebad = "lists no layer"
  if (tablebad != "") { print "check_layers: " table ": " tablebad > "/dev/stderr"; exit 2 }
  nd = split(dirs, d, "\n")
  for (i = 1; i <= nd; i++)
    if (d[i] != "" && !(d[i] in rank))
      fail("src/" d[i] "/: folder is not a layer of " table " (place the new layer in the table)")
}
{ exists[$0] = 1; files[++nf] = $0 }
END {
  if (tablebad != "") exit 2   # exit in BEGIN still runs END
  for (i = 1; i <= nf; i++) {
    f = files[i]
    if (f !~ /\.[ch]$/) continue
    if (index(f, "/") == 0) { fail("src/" f ": source file outside any layer folder"); continue }
    layer = substr(f, 1, index(f, "/") - 1)
    if (!(layer in rank)) continue              # already reported as a folder
    nsrc++
    ln = 0
    while ((r = (getline line < (src "/" f))) > 0) {
      ln++
      if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
      inc = line
      sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", inc)
      if (index(inc, "\"") == 0) { fail("src/" f ":" ln ": unterminated include"); continue }
      inc = substr(inc, 1, index(inc, "\"") - 1)
      ninc++
      at = "src/" f ":" ln
      if (index(inc, "/") == 0) {
        fail(at ": include \"" inc "\" is not folder-qualified (write \"LAYER/" inc "\")")
        continue
      }
      y = substr(inc, 1, index(inc, "/") - 1)
      if (!(y in rank)) { fail(at ": include \"" inc "\" names no layer of " table); continue }
      if (!(inc in exists)) { fail(at ": include \"" inc "\": no such header under src/"); continue }
      if (y == layer || ((layer SUBSEP y) in may)) continue
      if (rank[y] > rank[layer])
        fail(at ": layer " layer " includes \"" y "/...\" from higher layer " y)
      else
        fail(at ": layer " layer " includes \"" y "/...\": " layer " may include only" \
             (deps[layer] == "" ? " its own headers" : deps[layer]) " (" table ")")
    }
    if (r < 0) fail("src/" f ": cannot read")
    close(src "/" f)
  }
  if (bad) exit 1
  if (nsrc == 0 || ninc == 0) {
    print "check_layers: no quoted include in any .c or .h file under " src ": nothing was checked"
    exit 1
  }
  printf "layers: %d files, %d quoted includes, %d layers, %d edges: every include is folder-qualified and goes to its own layer or one its line in the table names\n", nsrc, ninc, n, nedge
}'
