#!/bin/bash
# gpurig-mpi bench --mpi under a real mpirun (Open MPI), with the stand-in
# driver libraries (tests/stub, whose NCCL meets across processes through a
# temporary directory): two ranks on this machine, loopback only, each run
# bounded by timeout. Checks the all-reduce rows (busbw per size, correct
# sums), the gathered per-node and per-rank lines, the slowest node and link,
# --per node, a corrupting transport, a failing NCCL, the node checks under a
# --root tree, fleet --mpi over three ranks' trees (and four differing in NCCL, IOMMU and
# AER), and that no process and no
# rendezvous directory is left.
# usage: mpi.sh GPURIG-MPI   (env: GPURIG_TEST_STUB, GPURIG_TEST_DATA, GPURIG_DATA)
set -u
BIN=${1:?usage: mpi.sh GPURIG-MPI}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! command -v mpirun >/dev/null; then
  echo "FAIL: mpirun not found: Open MPI is not installed (apt-get install openmpi-bin libopenmpi-dev)"
  exit 1
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# the stand-in NCCL's rendezvous directories go here, to be counted after
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
export GPURIG_DRIVER_DIR=$GPURIG_TEST_STUB
# root in CI's containers; loopback only, shared memory between the ranks
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
# containers often forbid the cross-memory attach vader would use for large messages
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Under ASan (setup.sh's sanitizer leg) leak checking stays off for these runs: Open MPI leaves
# thousands of its own allocations at MPI_Finalize, from plugins it has unloaded by then (so no
# suppression can name them). Memory errors are still caught; gpurig's own leaks are checked by
# every other test of the same core library.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
HOST=$(hostname)

# run NP ARGS...: stdout to $WORK/out, stderr to $WORK/err, exit status in $rc. The limit is a
# hang's, not a speed bar: the stand-in's all-reduce moves every byte through files for real, and
# on a machine busy with other work (ctest -j2 beside CPU-bound loops) one run of 64 MiB took
# minutes where an idle machine takes seconds. The checks below read the figures the stand-in
# simulates, which do not depend on that.
RUN_LIMIT_S=300
run() {
  local np=$1
  shift
  timeout -k 5 $RUN_LIMIT_S mpirun --oversubscribe -np "$np" "$BIN" bench --mpi "$@" >"$WORK/out" 2>"$WORK/err"
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    fail "mpirun -np $np $* ran past $RUN_LIMIT_S s"
  fi
}
# the checks that are not about the sizes swept stop at 1 MiB (64 KiB, 256 KiB, 1 MiB): the same
# paths through gpurig, 1/64 of the bytes through the stand-in's files
SMALL="--allreduce-max 1M"

# 1. two ranks, one GPU each (the default machine: GPU1, rank 1's, trains at x8 of x16)
run 2 --quick
out=$(cat "$WORK/out")
[ "$rc" = 1 ] || fail "-np 2 --quick: exit $rc, want 1 (GPU1's link below its width); stderr: $(head -c 600 "$WORK/err")"
grep -q "2 MPI ranks on 1 node, one rank per GPU, 2 NCCL 2.21.5 ranks" <<<"$out" || fail "-np 2: no header line"
rows=$(awk '/^ +[0-9]+ [KMG]iB +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+$/' <<<"$out")
want="64 KiB 256 KiB 1 MiB 4 MiB 16 MiB 64 MiB"
got=$(awk '{print $1, $2}' <<<"$rows" | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] || fail "-np 2: sizes '$got', want '$want'"
# two ranks: busbw = algbw x 2(n-1)/n = algbw; no wrong value anywhere
awk '$7 != 0 { print "wrong values at " $1 " " $2; bad = 1 }
     $6 != $5 { print "busbw " $6 " != algbw " $5 " at " $1 " " $2; bad = 1 }
     END { exit bad }' <<<"$rows" || fail "-np 2: rows: $rows"
# the stand-in's ring runs at 11 GB/s plus 10 us per call: 64 MiB near 11, 64 KiB far below
last=$(tail -n 1 <<<"$rows" | awk '{print $6}')
first=$(head -n 1 <<<"$rows" | awk '{print $6}')
awk -v l="$last" -v f="$first" 'BEGIN { exit !(l > 10 && l < 11.01 && f < l / 2) }' \
  || fail "-np 2: busbw $first GB/s at 64 KiB and $last GB/s at 64 MiB, want under half and 10..11"
grep -Eq "^  $HOST +2 ranks  largest all-reduce [0-9]+ us  nvidia_peermem (not loaded|loaded)" <<<"$out" \
  || fail "-np 2: no node line for $HOST"
grep -q "rank 0 on $HOST (local 0, NCCL rank 0): GPU 0000:01:00.0 Gen4 x16" <<<"$out" || fail "-np 2: rank 0's line"
grep -q "rank 1 on $HOST (local 1, NCCL rank 1): GPU 0000:02:00.0 Gen4 x8 (trained below its x16)" <<<"$out" \
  || fail "-np 2: rank 1's line"
grep -q "warn bench.mpi-link-width: rank 1 on $HOST: its GPU's PCIe link trained at x8 of x16" <<<"$out" || fail "-np 2: no link warning"
grep -Eq "^slowest node: $HOST \([0-9]+ us for the largest all-reduce\)" <<<"$out" || fail "-np 2: slowest node"
grep -q "^slowest link: $HOST, GPU 0000:02:00.0 Gen4 x8 (trained below its x16) (15.8 GB/s per direction)" <<<"$out" \
  || fail "-np 2: slowest link"
[ "$fails" = 0 ] || { echo "--- output"; echo "$out"; }

# 2. the same as JSON: one document from rank 0 only
run 2 --quick --json
python3 - "$WORK/out" "$HOST" <<'PY' || fail "-np 2 --json"
import json, sys
d = json.load(open(sys.argv[1]))
host = sys.argv[2]
assert d["mpi_ranks"] == 2 and d["nccl_ranks"] == 2 and d["per"] == "gpu", d
rows = d["allreduce"]
assert [r["size_bytes"] for r in rows] == [65536 << (2 * k) for k in range(6)], rows
for r in rows:
    assert r["wrong"] == 0 and r["busbw_gbps"] > 0, r
    assert abs(r["algbw_gbps"] / (r["size_bytes"] / r["time_avg_us"] / 1e3) - 1) < 1e-6, r
    assert abs(r["busbw_gbps"] / r["algbw_gbps"] - 1) < 1e-6, r
    assert r["time_max_us"] >= r["time_avg_us"] - 1e-9, r
assert [r["rank"] for r in d["ranks"]] == [0, 1], d["ranks"]
assert d["ranks"][1]["gpu"] == "0000:02:00.0" and d["ranks"][1]["link_cur_width"] == 8, d["ranks"][1]
assert "nvidia_peermem" in d["ranks"][0] and "nvidia_peermem" not in d["ranks"][1], d["ranks"]
assert d["slowest_node"] == host and d["slowest_link_rank"] == 1, d
assert [(f["severity"], f["id"]) for f in d["findings"]] == [("warn", "bench.mpi-link-width")], d["findings"]
assert d["findings"][0]["subject"] == "rank 1 on " + host, d["findings"]
PY

# 3. one rank per node: one process with all four GPUs as NCCL ranks 0-3
#    (sum 1+2+3+4 checked by gpurig), busbw = algbw x 1.5
run 1 --quick --per node --json $SMALL
python3 - "$WORK/out" <<'PY' || fail "-np 1 --per node"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["nccl_ranks"] == 4 and d["per"] == "node" and d["ranks"][0]["gpus"] == 4, d
assert [r["size_bytes"] for r in d["allreduce"]] == [65536, 262144, 1048576], d["allreduce"]
for r in d["allreduce"]:
    assert r["wrong"] == 0 and abs(r["busbw_gbps"] / r["algbw_gbps"] - 1.5) < 1e-6, r
PY
# --per node with two ranks on one node is refused by both, and says how
run 2 --quick --per node $SMALL
[ "$rc" = 2 ] || fail "-np 2 --per node: exit $rc, want 2"
grep -q "error: --per node wants one rank per node, this node has 2" "$WORK/out" || fail "-np 2 --per node: no reason"

# 4. a transport that corrupts: every size has wrong values, exit 2
GPURIG_STUB_SCENARIO=net-corrupt run 2 --quick $SMALL
[ "$rc" = 2 ] || fail "net-corrupt: exit $rc, want 2"
n=$(grep -c "fail bench.mpi-wrong: the all-reduce of .* gave [1-9][0-9]* wrong values" "$WORK/out")
[ "$n" = 3 ] || fail "net-corrupt: $n fail findings, want 3 (one per size): $(cat "$WORK/out")"

# 5. NCCL that cannot start: every rank says why, nothing measured
GPURIG_STUB_SCENARIO=ncclfail run 2 --quick $SMALL
[ "$rc" = 2 ] || fail "ncclfail: exit $rc, want 2"
n=$(grep -c "error: ncclCommInitRank: NCCL error 2" "$WORK/out")
[ "$n" = 2 ] || fail "ncclfail: $n rank errors, want 2"
grep -q "slowest node" "$WORK/out" && fail "ncclfail: a slowest node named with nothing measured"

# 6. the node checks read the --root tree: RDMA NICs and nvidia_peermem there
cp -a "$GPURIG_TEST_DATA/trees/nic-rdma" "$WORK/tree"
mkdir -p "$WORK/tree/sys/module/nvidia_peermem"
run 2 --quick $SMALL --root "$WORK/tree"
grep -q "largest all-reduce [0-9]* us  nvidia_peermem loaded" "$WORK/out" || fail "--root: peermem not seen"
grep -q "NICs 3 (3 RDMA, 1 of them within PIX/PXB of a GPU)" "$WORK/out" || fail "--root: NIC line"
grep -q "warn bench.mpi-gdr: .*: 1 of 2 GPUs have no RDMA NIC within PIX/PXB" "$WORK/out" || fail "--root: GDR warning"
rmdir "$WORK/tree/sys/module/nvidia_peermem"
run 2 --quick $SMALL --root "$WORK/tree"
grep -q "nvidia_peermem not loaded" "$WORK/out" || fail "--root: peermem absent not seen"
grep -q "warn bench.mpi-peermem: .*: an RDMA NIC but nvidia_peermem is not loaded" "$WORK/out" || fail "--root: no peermem warning"

# 7. fleet --mpi: three ranks, each checking its own gathered tree (rank 2's GPU1 trains at x8
# of x16), their doctor reports gathered to rank 0 and compared (docs/fleet.md)
mkdir -p "$WORK/fleet"
ln -s "$GPURIG_TEST_DATA/trees/doctor-healthy" "$WORK/fleet/node0"
ln -s "$GPURIG_TEST_DATA/trees/doctor-healthy" "$WORK/fleet/node1"
ln -s "$GPURIG_TEST_DATA/trees/doctor-riser-x8" "$WORK/fleet/node2"
fleet() { # np, extra args: each rank's --root is $WORK/fleet/node<rank>
  local np=$1
  shift
  timeout -k 5 $RUN_LIMIT_S mpirun --oversubscribe -np "$np" sh -c \
    'd=$1; shift; exec "$0" fleet --mpi --root "$d/node$OMPI_COMM_WORLD_RANK" "$@"' "$BIN" "$WORK/fleet" "$@" \
    >"$WORK/out" 2>"$WORK/err"
  rc=$?
}
fleet 3
[ "$rc" = 1 ] || fail "fleet --mpi: exit $rc, want 1; stderr: $(head -c 600 "$WORK/err")"
grep -q "rank2 GPU1 0000:02:00.0: link Gen4 x8, the 2 others Gen4 x16" "$WORK/out" ||
  fail "fleet --mpi: the x8 node not named: $(cat "$WORK/out")"
grep -q "Fleet: 3 nodes, 3 answered" "$WORK/out" || fail "fleet --mpi: not 3 answered"
fleet 3 --json
[ "$(jq -r '[.nodes[] | select(.differs)] | map(.name) | join(",")' "$WORK/out")" = rank2 ] ||
  fail "fleet --mpi --json: differing nodes"
# --html: rank 0 writes the page; rank2's row has the odd x8 link, the others none
fleet 3 --html "$WORK/fleet.html"
[ "$rc" = 1 ] && [ ! -s "$WORK/out" ] || fail "fleet --mpi --html: exit $rc (want 1), stdout: $(head -c 200 "$WORK/out")"
grep -q '<tr data-node="rank2">.*<td class="odd">Gen4 x8</td>' "$WORK/fleet.html" ||
  fail "fleet --mpi --html: rank2's x8 link not marked"
[ "$(grep -c '<td class="odd">' "$WORK/fleet.html")" = 2 ] || # the row's cell and the majority's "2 of 3"
  fail "fleet --mpi --html: $(grep -c '<td class="odd">' "$WORK/fleet.html") odd cells, want 2"
# the facts beyond links, one node differing in each: rank 1's NCCL is 2.18.5 (the stand-in's
# scenario, for that rank only), rank 2's IOMMU translates, rank 3's GPU3 link counted AER errors
# (copies named after this host: doctor asks CUDA and NCCL only of a tree gathered here)
mkdir -p "$WORK/fleet2"
k=0
for t in doctor-healthy doctor-healthy doctor-iommu-translated doctor-aer-rootport; do
  cp -a "$GPURIG_TEST_DATA/trees/$t" "$WORK/fleet2/node$k"
  sed -i "s/^HostName: .*/HostName: $HOST/" "$WORK/fleet2/node$k/proc/hwloc-nofile-info"
  k=$((k + 1))
done
timeout -k 5 90 mpirun --oversubscribe -np 4 sh -c \
  'd=$1; shift; [ "$OMPI_COMM_WORLD_RANK" = 1 ] && export GPURIG_STUB_SCENARIO=nccl-2.18
   exec "$0" fleet --mpi --root "$d/node$OMPI_COMM_WORLD_RANK" "$@"' "$BIN" "$WORK/fleet2" \
  >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" = 1 ] || fail "fleet --mpi, facts: exit $rc, want 1; stderr: $(head -c 600 "$WORK/err")"
for want in "rank1: NCCL 2.18.5, the 3 others 2.21.5" "rank2: IOMMU translated, the 3 others passthrough" \
  "rank3 GPU3 0000:42:00.0: 5000 AER correctable errors, the 3 others 0"; do
  grep -qF "$want" "$WORK/out" || fail "fleet --mpi, facts: no '$want' in: $(cat "$WORK/out")"
done
grep -q "^  rank0  *  4 .*12\.4  *2\.21\.5  *passthrough  *0  *0  *ok" "$WORK/out" ||
  fail "fleet --mpi, facts: rank0's row: $(cat "$WORK/out")"
# a rank whose machine cannot be read answers with why: a failure naming it, not a hang
rm "$WORK/fleet/node2" && mkdir "$WORK/fleet/node2"
fleet 3
[ "$rc" = 2 ] || fail "fleet --mpi, an unreadable node: exit $rc, want 2"
grep -q "fail.*  rank2: no report: rank2: .*node2/sys/bus/pci/devices" "$WORK/out" || fail "fleet --mpi: unreadable node not named: $(cat "$WORK/out")"

# 8. nothing left behind: no rank, no rendezvous directory
sleep 0.5
left=$(pgrep -f -- "$BIN (bench|fleet) --mpi" || true)
[ -z "$left" ] || fail "processes left: $left"
dirs=$(ls -A "$TMPDIR" | grep gpurig-nccl || true)
[ -z "$dirs" ] || fail "rendezvous directories left: $dirs"

if [ "$fails" -gt 0 ]; then
  echo "mpi: $fails failure(s)"
  exit 1
fi
echo "mpi: ok"
