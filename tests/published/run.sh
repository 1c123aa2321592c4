#!/usr/bin/env bash
# Published-matrix test: for every machine NAME in tests/data/published/ it
# runs `gpurig topo --rig NAME.rig`, reads the nvidia-smi level matrix gpurig
# predicts (GPU x GPU, GPU x NIC, NIC x NIC) and compares it cell by cell with
# the real `nvidia-smi topo -m` of that machine as published (NAME.topo-m.txt).
#
# Reading a matrix (the same awk reads nvidia-smi's and gpurig's text):
#   - lines starting with # are the file's own header and are skipped;
#   - the header is the first line whose first word is GPU0 and that has a
#     "CPU Affinity" column; the matrix columns are the words before "CPU";
#     CPU Affinity, NUMA Affinity and GPU NUMA ID are ignored;
#   - cells are separated by tabs or spaces (both layouts exist); " X " is X;
#   - a row is a line whose first word names a column; the block ends at the
#     first line that does not;
#   - NICs: newer nvidia-smi prints NIC0, NIC1, ... and a "NIC Legend"
#     (NIC0: mlx5_0); older versions name the column mlx5_0 itself. Every NIC
#     is identified by that legend name, on both sides: gpurig's legend gives
#     the rig's `nic NAME`, so a rig names its NICs as the machine's RDMA
#     devices (nic mlx5_0 ...) and the NIC numbering order never matters.
#     Where a rig gives its NICs' RDMA devices (`nic ... rdma mlx5_3`), the
#     order is checked too: gpurig numbers NICs as nvidia-smi does, so its
#     NIC0, NIC1, ... must carry the published columns' names in the
#     published order (a matrix read by position reads the same).
#     A rig's `# as-published: GPURIG_NAME PUBLISHED_NAME` comment lines
#     rename gpurig's side where the rig cannot use the machine's name (the
#     second function of a dual-port card is NAME.1 in a rig, mlx5_5 on a
#     machine).
#
# Each off-diagonal cell of the published matrix is compared with gpurig's
# cell for the same two devices. A difference passes only when NAME.known has
# the line `ROW COL published=P gpurig=G reason: WHY` (ROW and COL as the
# published matrix labels them); a known line that no longer describes a
# difference fails as stale, so the list stays exact. A device gpurig shows
# that the published matrix lacks (or the reverse) is a mismatch too.
#
# A rig gpurig refuses (exit 2) fails the test with gpurig's message.
#
# Then a selftest doctors one published matrix (one cell changed) and one
# allow-list (a stale line, a line without a reason) and checks that each
# makes the comparison fail, naming the cell.
#
# With --roundtrip instead of NAME, it reads every published matrix itself
# (`gpurig topo --input - < NAME.topo-m.txt`, here and in ../data/smi-topo/):
# gpurig draws a PCIe tree from the levels, and the matrix it prints from
# that tree must be the published one, cell by cell and NIC by NIC. Then a
# matrix with one cell changed must not pass against the original's output.
#
# Usage: run.sh GPURIG_BINARY [NAME | --roundtrip]   (environment: GPURIG_DATA, GPURIG_PCI_IDS)
set -u
gpurig=$1
only=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../data/published"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpurig-published.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# parse_matrix FILE: one line per off-diagonal cell,
#   ROWLABEL COLLABEL VALUE ROWNAME COLNAME
# (LABEL as printed, NAME after the NIC legend); exit 1 with a message when
# the file holds no readable matrix.
parse_matrix() {
  awk -v file="$1" '
    function fail(msg) { printf "%s: %s\n", file, msg > "/dev/stderr"; bad = 1; exit 1 }
    /^#/ { next }
    !inhdr && !done && $1 == "GPU0" && /CPU Affinity/ {
      for (n = 0; n < NF && $(n + 1) != "CPU"; n++) { col[n + 1] = $(n + 1); iscol[$(n + 1)] = 1 }
      if (n == 0) fail("empty header")
      inhdr = 1; next
    }
    inhdr {
      if (!($1 in iscol)) { inhdr = 0; done = 1 }
      else {
        if (NF < n + 1) fail(sprintf("row %s has %d cells, the header %d", $1, NF - 1, n))
        if ($1 in seen) fail("row " $1 " twice")
        seen[$1] = 1; rows[++nrows] = $1
        for (j = 1; j <= n; j++) cell[$1, col[j]] = $(j + 1)
        next
      }
    }
    /^[ \t]*NIC[0-9]+:/ { k = $1; sub(/:$/, "", k); legend[k] = $2 }
    END {
      if (bad) exit 1
      if (!n) fail("no matrix (no line starting with GPU0 with a CPU Affinity column)")
      for (r = 1; r <= nrows; r++) for (j = 1; j <= n; j++) {
        a = rows[r]; b = col[j]
        if (a == b) { if (cell[a, b] != "X") fail("diagonal cell " a " is " cell[a, b] ", not X"); continue }
        if ((a, b) in cell) printf "%s %s %s %s %s\n", a, b, cell[a, b], name(a), name(b)
      }
    }
    function name(x) { return (x in legend) ? legend[x] : x }
  ' "$1"
}

# nic_names FILE: the NIC columns of FILE's matrix in order, by name (the
# legend's for NICk, else the column label itself: older nvidia-smi).
nic_names() {
  awk '
    /^#/ { next }
    !hdr && $1 == "GPU0" && /CPU Affinity/ { for (i = 1; i <= NF && $i != "CPU"; i++) if ($i !~ /^GPU[0-9]+$/) c[++n] = $i; hdr = 1; next }
    /^[ \t]*NIC[0-9]+:/ { k = $1; sub(/:$/, "", k); legend[k] = $2 }
    END { for (i = 1; i <= n; i++) print ((c[i] in legend) ? legend[c[i]] : c[i]) }
  ' "$1"
}

# nic_order LABEL PUBLISHED GPURIG_TEXT RIG: for a rig that names RDMA
# devices, gpurig's NIC columns carry the published names in the published
# order; 1 and a line naming the first difference otherwise.
nic_order() {
  grep -E '^nic ' "$4" | grep -Eq ' rdma +([A-Za-z][A-Za-z0-9_-]*)' || return 0
  grep -E '^nic ' "$4" | grep -Eq ' rdma +(on|off)( |$)' && return 0
  if ! diff <(nic_names "$2") <(nic_names "$3") >"$tmp/order.diff"; then
    echo "  NIC ORDER differs from the published columns (< published, > gpurig):"; sed 's/^/    /' "$tmp/order.diff"
    return 1
  fi
  echo "  NIC order: $(nic_names "$3" | tr '\n' ' ')as published"
}

# gpurig_matrix RIG OUT: gpurig's text output for RIG into OUT; 0 when it ran
# (exit 0, or 1 = a finding is a warning).
gpurig_matrix() {
  "$gpurig" topo --rig "$1" >"$2" 2>"$2.err"
  local rc=$?
  if [ $rc -gt 1 ]; then echo "gpurig topo --rig $1: exit $rc: $(head -1 "$2.err")"; return 1; fi
}

# compare LABEL PUBLISHED GPURIG_TEXT KNOWN RIG: prints one line per
# difference and a summary line `LABEL cells agree known mismatch stale`;
# returns 1 when any difference is not in KNOWN, a KNOWN line is stale or
# malformed. RIG's `# as-published: GPURIG_NAME PUBLISHED_NAME` lines rename
# gpurig's devices first (a dual-port card's second function is NAME.1 in a
# rig, the next mlx5 device on the machine).
compare() {
  local label=$1 pub=$2 got=$3 known=$4 rig=$5
  parse_matrix "$pub" >"$tmp/pub.cells" || return 1
  parse_matrix "$got" >"$tmp/got.raw" || return 1
  sed -n 's/^# as-published: *//p' "$rig" >"$tmp/alias"
  awk 'FILENAME == ARGV[1] { if (NF != 2) { print "bad as-published line: " $0 > "/dev/stderr"; exit 1 } a[$1] = $2; next }
       { if ($4 in a) $4 = a[$4]; if ($5 in a) $5 = a[$5]; print }' "$tmp/alias" "$tmp/got.raw" >"$tmp/got.cells" ||
    return 1
  if [ ! -f "$known" ]; then : >"$tmp/empty.known"; known="$tmp/empty.known"; fi
  awk -v label="$label" -v knownfile="$known" '
    BEGIN {
      while ((getline line < knownfile) > 0) {
        nl++
        if (line ~ /^[ \t]*(#|$)/) continue
        if (line !~ /^[^ ]+ [^ ]+ published=[^ ]+ gpurig=[^ ]+ reason: *[^ ]/) {
          printf "  BAD KNOWN LINE %s:%d: expected ROW COL published=P gpurig=G reason: WHY\n", knownfile, nl
          bad++; continue
        }
        split(line, w, " ")
        key = w[1] " " w[2] " " w[3] " " w[4]
        if (key in known) { printf "  BAD KNOWN LINE %s:%d: %s listed twice\n", knownfile, nl, w[1] " " w[2]; bad++ }
        known[key] = nl; used[key] = 0
      }
    }
    FILENAME == ARGV[1] { g[$4, $5] = $3; gname[$4] = 1; next }
    {
      pname[$4] = 1; cells++
      v = (($4, $5) in g) ? g[$4, $5] : "-"
      if (v == $3) { agree++; next }
      key = $1 " " $2 " published=" $3 " gpurig=" v
      if (key in known) { used[key] = 1; nknown++; printf "  known     %-8s %-8s published=%-5s gpurig=%-5s (%s x %s)\n", $1, $2, $3, v, $4, $5; next }
      mism++
      printf "  MISMATCH  %-8s %-8s published=%-5s gpurig=%-5s (%s x %s)\n", $1, $2, $3, v, $4, $5
    }
    END {
      for (d in gname) if (!(d in pname)) { mism++; printf "  MISMATCH  gpurig shows %s, which the published matrix does not have\n", d }
      for (key in used) if (!used[key]) { stale++; printf "  STALE KNOWN LINE %s:%d: %s is no longer a difference\n", knownfile, known[key], key }
      printf "%s %d %d %d %d %d\n", label, cells, agree, nknown, mism, stale + bad > "/dev/stderr"
      exit (mism || stale || bad) ? 1 : 0
    }
  ' "$tmp/got.cells" "$tmp/pub.cells" 2>"$tmp/summary"
  local rc=$?
  cat "$tmp/summary" >>"$tmp/table"
  return $rc
}

# roundtrip: every published matrix read back through --input (standard input)
roundtrip() {
  local f n rc fail=0 ran=0
  : >"$tmp/table"
  : >"$tmp/none.rig"
  for f in "$data"/*.topo-m.txt "$here/../data/smi-topo"/*.topo-m.txt; do
    n=$(basename "$f" .topo-m.txt)
    "$gpurig" topo --input - <"$f" >"$tmp/$n.rt" 2>"$tmp/$n.err"; rc=$?
    if [ $rc -gt 1 ]; then echo "FAIL $n: gpurig topo --input: exit $rc: $(head -1 "$tmp/$n.err")"; fail=1; continue; fi
    ran=$((ran + 1))
    compare "$n" "$f" "$tmp/$n.rt" /dev/null "$tmp/none.rig" || { echo "FAIL $n (read back)"; fail=1; }
    [ "$(nic_names "$f")" = "$(nic_names "$tmp/$n.rt")" ] || { echo "FAIL $n: NIC columns differ"; fail=1; }
  done
  printf '%-34s %6s %6s %6s %9s %6s\n' "matrix (read back)" cells agree known mismatch stale
  while read -r l c a k m s; do printf '%-34s %6d %6d %6d %9d %6d\n' "$l" "$c" "$a" "$k" "$m" "$s"; done <"$tmp/table"
  # selftest: the first cell of the DGX A100's GPU0 row changed must be caught
  awk '!done && !/^#/ && $1 == "GPU0" && !/CPU Affinity/ { $3 = "PIX"; done = 1 } { print }' \
    "$data/dgx-a100.topo-m.txt" >"$tmp/doctored.txt"
  if compare selftest "$tmp/doctored.txt" "$tmp/dgx-a100.rt" /dev/null "$tmp/none.rig" >"$tmp/self.out"; then
    echo "FAIL selftest: a doctored cell read back as the original"; fail=1
  else
    echo "selftest: a doctored GPU0/GPU1 cell was caught"
  fi
  [ $ran -ge 5 ] || { echo "FAIL: only $ran matrices read back"; fail=1; }
  exit $fail
}
[ "$only" = --roundtrip ] && roundtrip

: >"$tmp/table"
fail=0 ran=0 first_ok=
for rig in "$data"/*.rig; do
  name=$(basename "$rig" .rig)
  [ -n "$only" ] && [ "$name" != "$only" ] && continue
  pub="$data/$name.topo-m.txt"
  if [ ! -f "$pub" ]; then echo "FAIL $name: no $name.topo-m.txt beside $name.rig"; fail=1; continue; fi
  echo "== $name"
  if ! gpurig_matrix "$rig" "$tmp/$name.out"; then fail=1; continue; fi
  ran=$((ran + 1))
  if compare "$name" "$pub" "$tmp/$name.out" "$data/$name.known" "$rig" && nic_order "$name" "$pub" "$tmp/$name.out" "$rig"; then
    [ -n "$first_ok" ] || first_ok=$name
  else
    echo "FAIL $name"; fail=1
  fi
done

echo
printf '%-22s %6s %6s %6s %9s %6s\n' machine cells agree known mismatch stale
while read -r l c a k m s; do
  printf '%-22s %6d %6d %6d %9d %6d\n' "$l" "$c" "$a" "$k" "$m" "$s"
done <"$tmp/table"

# Selftest: the comparison must catch a doctored cell, a stale allow-list
# line and a line without a reason, on a machine that passed above.
selftest() {
  local n=$1 pub="$data/$1.topo-m.txt" out="$tmp/$1.out" rig="$data/$1.rig" rc
  # GPU0's cell for GPU1 (the second matrix cell of the first row) changed
  # to a level that cannot be what was published there.
  awk '!done && !/^#/ && $1 == "GPU0" && !/CPU Affinity/ { $3 = ($3 == "PHB") ? "SYS" : "PHB"; done = 1 } { print }' \
    "$pub" >"$tmp/doctored.txt"
  : >"$tmp/table"
  compare selftest "$tmp/doctored.txt" "$out" "$data/$n.known" "$rig" >"$tmp/self.out"; rc=$?
  if [ $rc -eq 0 ] || ! grep -q 'MISMATCH  GPU0     GPU1' "$tmp/self.out"; then
    echo "FAIL selftest: a doctored GPU0/GPU1 cell in $n was not reported"; cat "$tmp/self.out"; return 1
  fi
  # the same difference, allowed with a reason, passes
  local doct
  doct=$(awk '$1 == "MISMATCH" { print $2, $3, $4, $5; exit }' "$tmp/self.out")
  { [ -f "$data/$n.known" ] && cat "$data/$n.known"; echo "$doct reason: selftest"; } >"$tmp/self.known"
  compare selftest "$tmp/doctored.txt" "$out" "$tmp/self.known" "$rig" >"$tmp/self.out" ||
    { echo "FAIL selftest: an allowed difference still failed"; cat "$tmp/self.out"; return 1; }
  # a stale allow-list line fails
  { [ -f "$data/$n.known" ] && cat "$data/$n.known"; echo "GPU0 GPU1 published=SYS gpurig=PIX reason: selftest, stale"; } >"$tmp/stale.known"
  if compare selftest "$pub" "$out" "$tmp/stale.known" "$rig" >"$tmp/self.out" || ! grep -q 'STALE KNOWN LINE' "$tmp/self.out"; then
    echo "FAIL selftest: a stale known line was accepted"; cat "$tmp/self.out"; return 1
  fi
  # a line without a reason fails
  echo "$doct" >"$tmp/noreason.known"
  if compare selftest "$tmp/doctored.txt" "$out" "$tmp/noreason.known" "$rig" >"$tmp/self.out" || ! grep -q 'BAD KNOWN LINE' "$tmp/self.out"; then
    echo "FAIL selftest: a known line without a reason was accepted"; cat "$tmp/self.out"; return 1
  fi
  # the order check: a published header whose first two NIC columns trade
  # places must not pass (gpurig numbering NICs by bus looks like this)
  if grep -q ' rdma ' "$rig"; then
    awk '!done && !/^#/ && $1 == "GPU0" && /CPU Affinity/ {
           for (i = 1; i <= NF; i++) if ($i !~ /^GPU/) { j = i; break }
           t = $j; $j = $(j + 1); $(j + 1) = t; done = 1 } { print }' "$pub" >"$tmp/swapped.txt"
    if nic_order selftest "$tmp/swapped.txt" "$out" "$rig" >"$tmp/self.out"; then
      echo "FAIL selftest: NIC columns out of gpurig's order were not reported"; cat "$tmp/self.out"; return 1
    fi
  fi
  echo "selftest ($n): doctored cell caught, allowed difference passed, stale and reasonless known lines refused, NIC order checked"
}

if [ -n "$first_ok" ]; then
  selftest "$first_ok" || fail=1
else
  echo "FAIL: no machine passed, so the selftest had nothing to doctor"; fail=1
fi
if [ $ran -eq 0 ]; then echo "FAIL: no machine ran"; fail=1; fi
exit $fail
