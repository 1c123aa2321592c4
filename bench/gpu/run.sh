#!/usr/bin/env bash
# The first run on a real NVIDIA GPU (issue 36; docs/measure.md, "On a real GPU"), as one
# command on the device machine: it builds gpurig there (the development packages it lacks
# travel as Debian 12 .debs in bench/gpu/debs/, unpacked under /tmp, never into /), falls
# back to bench/gpu/bundle/ (bench/gpu/bundle.sh) when the build fails, and then holds
# each command against an independent tool in the same run:
#   1 gpus --json      against nvidia-smi -q -x, field by field        (smi_compare.py)
#   2 bench --quick and the default bench against PyTorch and CuPy     (torch_copies.py, compare.py)
#   3 the single-GPU all-reduce against torch.distributed/NCCL, and which libnccl each loads
#   4 burn --duration 60 against nvidia-smi dmon beside it, its GEMM against torch.matmul
#   5 watch --count 10 --json against nvidia-smi dmon -c 10, CPU per sample  (side.py)
#   6 export scraped on loopback against nvidia-smi --query-gpu          (side.py)
#   7 topo, report, doctor and snapshot on the machine, and a gathered tree (gather.py)
# Each step has a time limit. Everything lands in $OUT/results.tar.gz (re-packed after each
# step, so a run stopped at its limit still brings back what it did) and the summary is
# printed last. It only reads: no clock, power limit or mode of the GPU is changed.
# usage (from the repository root, on the GPU machine): bash bench/gpu/run.sh [STEPS]
#   STEPS: a comma list of step names (env,build,gpus,topo,bench,torch,burn,watch,export);
#   default all
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
out=${OUT:-$repo/gpu-out}
steps=${1:-env,build,gpus,topo,bench,torch,burn,watch,export}
w=$(mktemp -d /tmp/gpurig-gpu.XXXXXX)
mkdir -p "$out"
summary=$w/summary.md
pack() { tar -C "$w" -czf "$out/results.tar.gz" . 2>/dev/null; cp "$summary" "$out/summary.md" 2>/dev/null; }
want() { [[ ",$steps," == *",$1,"* ]]; }
# step NAME LIMIT_S CMD...: runs CMD under a time limit, logs its exit status and seconds
step() {
  local name=$1 limit=$2 t0 rc
  shift 2
  echo "== $name (limit ${limit} s): $*" >>"$w/log.txt"
  t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@"
  rc=$?
  echo "   $name: rc=$rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$w/log.txt" >&2
  pack
  return $rc
}
say() { printf '%s\n' "$*" >>"$summary"; }

# -- the libraries PyTorch's wheels bring: gpurig is pointed at the same NCCL and cuBLAS
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null)
nccl_lib=$(find "$site/nvidia" -name 'libnccl.so.2' 2>/dev/null | head -1)
cublas_lib=$(find "$site/nvidia" -name 'libcublas.so.1[0-9]' 2>/dev/null | head -1)
addlib() { export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$1; }
for l in "$nccl_lib" "$cublas_lib"; do
  [ -n "$l" ] && addlib "$(dirname "$l")"
done

if want env; then
  { echo "date: $(date -u +%FT%TZ)"; uname -a; cat /etc/os-release 2>/dev/null | head -3
    nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,vbios_version,pci.bus_id --format=csv
    gcc --version | head -1; cmake --version | head -1; nproc; free -g | head -2
    echo "NCCL from the wheel: $nccl_lib"; echo "cuBLAS from the wheel: $cublas_lib"
    ldconfig -p | grep -E 'libnccl|libcublas|libnvidia-ml|libcuda\.so|libhwloc|libjansson|libncursesw' || true
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  } >"$w/env.txt" 2>&1
  pack
fi

gpurig=
if want build; then
  # first with what the machine has; then with the carried .debs unpacked under /tmp, their
  # .pc files pointed there (a sysroot would also rewrite the machine's own .pc files)
  gen=; command -v ninja >/dev/null && gen="-G Ninja"
  deps=/tmp/gpurig-deps lib=/tmp/gpurig-deps/usr/lib/x86_64-linux-gnu
  # a script, not a function: timeout runs programs
  printf '%s\n' "cmake -S . -B /tmp/build-gpu $gen -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPURIG_TESTS=OFF \"\$@\" &&" \
    "cmake --build /tmp/build-gpu -j 16" >/tmp/gpurig-build.sh
  if step build 180 bash /tmp/gpurig-build.sh >"$w/build.txt" 2>&1; then
    gpurig=/tmp/build-gpu/gpurig
    say "gpurig: built on this machine with its own libraries"
  else
    rm -rf /tmp/build-gpu "$deps" && mkdir -p "$deps"
    for d in bench/gpu/debs/*.deb; do dpkg -x "$d" "$deps"; done
    cp -a "$deps"/lib/x86_64-linux-gnu/. "$lib"/ 2>/dev/null # ncurses and tinfo unpack under /lib
    sed -i "s|^prefix=/usr|prefix=$deps/usr|; s|-L/usr/lib/x86_64-linux-gnu|-L$lib|" "$lib"/pkgconfig/*.pc
    export PKG_CONFIG_PATH=$lib/pkgconfig
    pc=$(command -v pkg-config || echo "$deps/usr/bin/pkgconf")
    if LD_LIBRARY_PATH=$lib step build-debs 180 bash /tmp/gpurig-build.sh -DPKG_CONFIG_EXECUTABLE="$pc" \
        >"$w/build-debs.txt" 2>&1; then
      gpurig=/tmp/build-gpu/gpurig
      addlib "$lib"
      say "gpurig: built on this machine with the carried Debian 12 libraries"
    fi
  fi
  [ -n "$gpurig" ] && export GPURIG_DATA=$repo/data
  # gpurig declares the NVIDIA functions itself (nv_api.h): compiled against the real headers
  # here, a prototype or layout that differs fails (tests/abi/abi_check.c)
  inc=$(dirname "$(find /usr/local/cuda/ /usr/local/cuda/targets -name nvml.h 2>/dev/null | head -1)")
  step abi 60 gcc -std=c17 -Wall -Wextra -Werror -c tests/abi/abi_check.c -o /tmp/abi.o -Isrc \
    -isystem "$inc" -isystem "$site/nvidia/nccl/include" -isystem "$site/nvidia/cu13/include" >"$w/abi.txt" 2>&1
  say "ABI check against $inc and the NCCL wheel's headers: exit $? ($(wc -l <"$w/abi.txt") lines of output)"
fi
if [ -z "$gpurig" ] && [ -x bench/gpu/bundle/gpurig ]; then
  addlib "$repo/bench/gpu/bundle/lib"
  export GPURIG_DATA=$repo/bench/gpu/bundle/data
  gpurig=$repo/bench/gpu/bundle/gpurig
  say "gpurig: the bundle built on Debian 12 (the build here failed or was not asked for)"
fi
[ -n "$gpurig" ] || { echo "run.sh: no gpurig to run" >&2; pack; exit 3; }
export GPURIG_PCI_IDS=${GPURIG_PCI_IDS:-$repo/tests/data/pci.ids}
"$gpurig" --version >>"$w/env.txt" 2>&1

if want gpus; then
  nvidia-smi -q -x >"$w/nvidia-smi-q.xml" 2>&1
  nvidia-smi -q >"$w/nvidia-smi-q.txt" 2>&1
  step gpus 30 "$gpurig" gpus >"$w/gpus.txt" 2>&1; echo "rc=$?" >>"$w/gpus.txt"
  step gpus-json 30 "$gpurig" gpus --json >"$w/gpus.json" 2>"$w/gpus-json.err"
  say "" "## 1. gpus --json against nvidia-smi -q -x"
  python3 bench/gpu/smi_compare.py "$w/gpus.json" "$w/nvidia-smi-q.xml" >>"$summary" 2>&1
  say "(smi_compare exit $?)"
fi

if want topo; then
  nvidia-smi topo -m >"$w/nvidia-smi-topo-m.txt" 2>&1
  nvidia-smi topo -p2p rw >>"$w/nvidia-smi-topo-m.txt" 2>&1
  for c in topo report doctor; do
    step "$c" 60 "$gpurig" "$c" >"$w/$c.txt" 2>&1; echo "rc=$?" >>"$w/$c.txt"
    step "$c-json" 60 "$gpurig" "$c" --json >"$w/$c.json" 2>"$w/$c-json.err"
  done
  step doctor-verbose 60 "$gpurig" doctor --verbose >"$w/doctor-verbose.txt" 2>&1
  step snapshot 60 "$gpurig" snapshot "$w/snapshot.xml" 2>"$w/snapshot.err"
  step gather 60 python3 bench/gpu/gather.py "$w/tree.tar.gz" 2>>"$w/log.txt"
  say "" "## 7. topo, report, doctor (exit statuses; outputs in the archive)"
  grep -h '^rc=' "$w/topo.txt" "$w/report.txt" "$w/doctor.txt" | paste -sd' ' >>"$summary"
  grep -E 'fail|warn|FAIL|WARN' "$w/doctor.txt" | head -20 >>"$summary"
fi

if want bench; then
  step bench-quick 60 env LD_DEBUG=libs LD_DEBUG_OUTPUT="$w/ld-debug" "$gpurig" bench --quick --no-progress --json \
    >"$w/bench-quick.json" 2>"$w/bench-quick.err"
  step bench-quick-text 60 "$gpurig" bench --quick --no-progress >"$w/bench-quick.txt" 2>&1
  step bench 240 "$gpurig" bench --no-progress --json >"$w/bench.json" 2>"$w/bench.err"
  say "" "## 3. the libraries gpurig's bench loaded (LD_DEBUG=libs)"
  grep -h 'calling init: .*\(nccl\|cublas\|libcuda\|nvidia-ml\)' "$w"/ld-debug* 2>/dev/null | sed 's/.*calling init: /- /' | sort -u >>"$summary"
fi

if want torch; then
  step torch 240 env PYTHONUNBUFFERED=1 python3 bench/gpu/torch_copies.py --cupy >"$w/torch.json" 2>"$w/torch.err"
  say "" "## 2-3. gpurig bench against PyTorch (full bench, then --quick)"
  python3 bench/gpu/compare.py "$w/bench.json" "$w/torch.json" >>"$summary" 2>&1
  python3 bench/gpu/compare.py "$w/bench-quick.json" "$w/torch.json" >>"$summary" 2>&1
  python3 - "$w/torch.json" >>"$summary" 2>&1 <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
print("\nCuPy copies:", json.dumps(t.get("cupy")))
print("torch NCCL", t.get("nccl_version"), "libraries:", json.dumps(t.get("libraries")))
EOF
fi

if want burn; then
  nvidia-smi dmon -s pucv -o T >"$w/burn-dmon.txt" 2>&1 &
  dmon=$!
  step burn 120 "$gpurig" burn --duration 60 --json --log "$w/burn-log.jsonl" --svg "$w/burn.svg" \
    >"$w/burn.json" 2>"$w/burn.err"
  echo "burn exit status: $?" >>"$w/burn.err"
  kill "$dmon" 2>/dev/null; wait "$dmon" 2>/dev/null
  step burn-gemm 60 "$gpurig" burn --load gemm --duration 15 --json >"$w/burn-gemm.json" 2>"$w/burn-gemm.err"
  n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("gemm_n") or 4096)' "$w/burn-gemm.json" 2>/dev/null || echo 4096)
  step torch-matmul 90 python3 bench/gpu/torch_copies.py --skip-copies --matmul "$n" >"$w/torch-matmul.json" 2>"$w/torch-matmul.err"
  say "" "## 4. burn --duration 60 against nvidia-smi dmon; GEMM against torch.matmul"
  tail -1 "$w/burn.err" >>"$summary"
  python3 bench/gpu/side.py burn "$w/burn.json" "$w/burn-dmon.txt" >>"$summary" 2>&1
  python3 - "$w/burn-gemm.json" "$w/torch-matmul.json" >>"$summary" 2>&1 <<'EOF'
import json, sys
b, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
g = [x.get("gemm_tflops") for x in b.get("gpus", [])]
print(f"\nburn --load gemm (n={b.get('gemm_n')}, exit {b.get('exit')}): {g} TFLOPS; torch.matmul: " +
      ", ".join(f"{r['dtype']} {r['tflops']:.1f}" for r in t.get("matmul", [])))
EOF
fi

if want watch; then
  say "" "## 5. watch --count 10 --json against nvidia-smi dmon -c 10"
  step watch 60 python3 bench/gpu/side.py watch "$gpurig" "$w" >>"$summary" 2>&1
fi
if want export; then
  say "" "## 6. export scraped against nvidia-smi --query-gpu"
  step export 60 python3 bench/gpu/side.py export "$gpurig" "$w" >>"$summary" 2>&1
fi
pack
cat "$w/log.txt" | grep -E '^   ' >&2
cat "$summary"
