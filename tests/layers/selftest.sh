#!/bin/sh
# Proves the layer check can fail: on copies of the real src/ tree, each with one
# deliberate change, check_layers.sh must name exactly that file and line, and
# must still accept an include that goes down along an edge of the table. An
# include of a lower layer that the graph does not allow (doctor including a
# backend) is refused, and accepted once the table grants that edge; a table
# whose layer names a layer after it is refused as a whole.
# usage: selftest.sh CHECKER TABLE SRC
set -u
[ $# -eq 3 ] || { echo "usage: selftest.sh CHECKER TABLE SRC" >&2; exit 2; }
checker=$1 table=$2 src=${3%/}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM
failed=0
case_no=0

# fresh: a new copy of src/ in $tmp/N/src, its path in r.
fresh() {
  case_no=$((case_no + 1))
  r=$tmp/$case_no/src
  mkdir "$tmp/$case_no" && cp -R "$src" "$r" || exit 2
}
# inject ROOT FILE TEXT: TEXT becomes line 2 of ROOT/FILE.
inject() {
  awk -v t="$3" 'NR == 2 { print t } { print } END { if (NR < 2) print t }' "$1/$2" >"$1/$2.new" &&
    mv "$1/$2.new" "$1/$2" || exit 2
}
# first_c ROOT LAYER_DIR: the first .c file of that folder, relative to ROOT.
first_c() {
  f=$(cd "$1" && ls "$2"/*.c 2>/dev/null | LC_ALL=C sort | head -n 1)
  [ -n "$f" ] || { echo "selftest: no .c file in src/$2" >&2; exit 2; }
  echo "$f"
}
# expect_fail WHAT ROOT LINE [TABLE]: the checker must exit 1 and print exactly LINE.
expect_fail() {
  out=$(sh "$checker" "${4:-$table}" "$2" 2>&1)
  rc=$?
  if [ $rc -ne 1 ] || [ "$out" != "$3" ]; then
    echo "FAIL ($1): expected exit 1 and exactly"
    echo "  $3"
    echo "got exit $rc and:"
    echo "$out" | sed 's/^/  /'
    failed=1
  else
    echo "refused ($1): $out"
  fi
}
# expect_pass WHAT ROOT [TABLE]
expect_pass() {
  out=$(sh "$checker" "${3:-$table}" "$2" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL ($1): expected exit 0, got exit $rc and:"
    echo "$out" | sed 's/^/  /'
    failed=1
  else
    echo "accepted ($1)"
  fi
}

# 0. The unchanged copy passes, so every refusal below is the injected line's.
fresh
expect_pass "unchanged copy" "$r"

# 1. base includes the printers.
fresh; f=$(first_c "$r" base)
inject "$r" "$f" '#include "print/common.h"'
expect_fail "base includes print" "$r" "src/$f:2: layer base includes \"print/...\" from higher layer print"

# 2. One rank up: facts includes model.
fresh; f=$(first_c "$r" facts)
inject "$r" "$f" '#include "model/topo.h"'
expect_fail "facts includes model" "$r" "src/$f:2: layer facts includes \"model/...\" from higher layer model"

# 3. A nested folder counts as its top folder: backends/nvidia includes doctor.
fresh; f=$(first_c "$r" backends/nvidia)
inject "$r" "$f" '  #  include "doctor/doctor.h"'
expect_fail "backends/nvidia includes doctor" "$r" "src/$f:2: layer backends includes \"doctor/...\" from higher layer doctor"

# 4. Only cli/ includes cli/: print includes cli.
fresh; f=$(first_c "$r" print)
inject "$r" "$f" '#include "cli/cli.h"'
expect_fail "print includes cli" "$r" "src/$f:2: layer print includes \"cli/...\" from higher layer cli"

# 5. A bare include of a header in the same folder.
fresh; f=$(first_c "$r" model)
inject "$r" "$f" '#include "topo.h"'
expect_fail "bare same-folder include" "$r" "src/$f:2: include \"topo.h\" is not folder-qualified (write \"LAYER/topo.h\")"

# 6. A folder that is not in the table.
fresh
mkdir "$r/zz_selftest" && printf '#include "base/util.h"\nint gr_zz_selftest;\n' >"$r/zz_selftest/zz.c" || exit 2
expect_fail "folder not in the table" "$r" "src/zz_selftest/: folder is not a layer of $table (place the new layer in the table)"

# 7. Down and sideways includes stay allowed: cli includes base, plan includes facts,
#    backends/nvidia includes gpu.
fresh
inject "$r" "$(first_c "$r" cli)" '#include "base/util.h"'
inject "$r" "$(first_c "$r" plan)" '#include "facts/data.h"'
inject "$r" "$(first_c "$r" backends/nvidia)" '#include "gpu/gpu.h"'
expect_pass "includes that go down" "$r"

# 8. The graph, not only the order: doctor sits above backends and still may
#    not include it (a temporary file in doctor/ including a backend's header).
fresh
printf '#include "backends/nvidia/nvidia.h"\nint gr_zz_selftest;\n' >"$r/doctor/zz_selftest.c" || exit 2
deps=$(sed -n 's/^doctor:[ \t]*\([^#]*\).*/\1/p' "$table" | tr -s ' \t' '  ' | sed 's/ *$//')
[ -n "$deps" ] || { echo "selftest: no doctor line in $table" >&2; exit 2; }
expect_fail "doctor includes backends" "$r" "src/doctor/zz_selftest.c:1: layer doctor includes \"backends/...\": doctor may include only $deps ($table)"
#    The same tree passes once the table grants the edge: the refusal was the graph's.
sed 's/^doctor:/doctor: backends/' "$table" >"$tmp/granted.txt" || exit 2
expect_pass "doctor includes backends where the table allows it" "$r" "$tmp/granted.txt"

# 9. A table whose layer names a layer listed after it (a cycle, or an order
#    that is not bottom-up) is refused as a whole (exit 2), naming the line.
sed 's/^base:.*/base: cli/' "$table" >"$tmp/cycle.txt" || exit 2
case_no=$((case_no + 1))
out=$(sh "$checker" "$tmp/cycle.txt" "$src" 2>&1)
rc=$?
want="check_layers: $tmp/cycle.txt: layer base may include cli, which is not a layer listed before it"
if [ $rc -ne 2 ] || [ "$out" != "$want" ]; then
  echo "FAIL (table with an edge upwards): expected exit 2 and exactly"
  echo "  $want"
  echo "got exit $rc and:"
  echo "$out" | sed 's/^/  /'
  failed=1
else
  echo "refused (table with an edge upwards): $out"
fi

[ $failed -eq 0 ] || { echo "layers selftest: the check does not refuse what it must"; exit 1; }
echo "layers selftest: $case_no cases, the check refuses each violation at its file and line"
