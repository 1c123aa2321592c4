#!/usr/bin/env bash
# gpurig's two set-up commands (see README):
#   ./setup.sh run    install what is missing, build, run the main job (gpurig report)
#   ./setup.sh test   install what is missing, build, run every test: unit and CLI golden
#                     tests, the same under ASan+UBSan, valgrind on the CLI, and each
#                     libFuzzer target for a short time
# Works on a fresh Debian 12 machine as root; as another user it needs the packages installed.
set -euo pipefail
cd "$(dirname "$0")"

# What building and running gpurig needs (`./setup.sh run`), nothing of the tests:
# libhwloc-plugins is only recommended by libhwloc15, so --no-install-recommends leaves it out;
# users' machines have it (hwloc's tools then parse XML with libxml2). gpurig works either way
# (its tests check the wording of both XML parsers).
# libncurses-dev (gpurig watch's view) is a build need (gpurig export's HTTP server is its own);
# pci.ids names devices.
RUN_PACKAGES=(cmake make gcc pkg-config libhwloc-dev libhwloc-plugins libjansson-dev libncurses-dev pci.ids)
# What the tests add (`./setup.sh test`): cmocka, the sanitizer and fuzzing compilers, valgrind;
# hwloc-nox's lstopo (bench/ and the XML tests), bzip2 (the real hwloc tarballs), jq;
# prometheus (server and promtool), tmux, curl, rsvg-convert and xmllint run the monitor tests
# (tests/monitor); zsh runs the zsh completion's test (tests/man/completion.sh). chromium (run headless) opens the HTML report in tests/report; without
# Recommends (fonts-liberation) its only font is whichever fontconfig-config's alternatives
# pull in, so fonts-dejavu-core is named: the label boxes the test measures are DejaVu's on
# every machine. procps's pgrep finds any browser process a run left behind. groff-base renders
# the man page in its test.
TEST_PACKAGES=(libcmocka-dev hwloc-nox bzip2 clang libclang-rt-14-dev valgrind jq
          prometheus tmux curl librsvg2-bin libxml2-utils groff-base
          chromium fonts-dejavu-core procps zsh
          # python3 runs the planner's fit and leave-one-source-out check (tests/measurements/fit.py)
          python3
          # Open MPI: gpurig-mpi (bench --mpi, fleet --mpi) and its test, mpirun on loopback
          # (tests/mpi/mpi.sh; as root it sets OMPI_ALLOW_RUN_AS_ROOT*)
          libopenmpi-dev openmpi-bin
          # lintian checks the Debian packages cpack makes (tests/package/deb.sh)
          lintian
          # AMD's ROCm SMI header: gpurig's declarations are compiled against it (tests/abi/abi_rocm.c)
          librocm-smi-dev
          # AMD's HIP runtime header, the same for the HIP declarations (tests/abi/abi_hip.c)
          libamdhip64-dev)
FUZZ_SECONDS=${GPURIG_FUZZ_SECONDS:-20}
JOBS=$(nproc 2>/dev/null || echo 2)

install_missing() { # packages...
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: missing packages: ${missing[*]}; run as root or apt-get install them" >&2
    exit 3
  fi
  echo "setup.sh: installing ${missing[*]}" >&2
  apt-get update -qq
  # packages with a service (prometheus) must not start it here: the tests start their own on
  # loopback and stop it (policy-rc.d is Debian's switch for that, removed again after)
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  [ $made_policy = 1 ] && rm -f "$policy"
  return 0
}

build() { # dir, extra cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS" >/dev/null
}

run_tests() {
  echo "== unit and CLI tests (gcc, -Werror)"
  build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPURIG_TESTS=ON
  # --timeout: a test without its own TIMEOUT gets 600 s, so a hang fails that test, never the
  # whole CI run's time
  (cd build && ctest --output-on-failure --timeout 600)

  echo "== the same under AddressSanitizer + UndefinedBehaviorSanitizer"
  build build-asan -DCMAKE_BUILD_TYPE=Debug -DGPURIG_SANITIZE=ON -DGPURIG_TESTS=ON
  # completion is left out here: it tests the shell scripts, not gpurig's memory (the gpurig
  # calls it makes, --help and the lists, run under the sanitizers in cli_golden), and on CI
  # it once hung under LeakSanitizer with gpurig started from zsh's command substitution
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/../fuzz/lsan.supp:print_suppressions=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure --timeout 600 -E '^completion$')

  echo "== valgrind on the CLI"
  local vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)
  local d=tests/data
  local rc=0
  export GPURIG_DATA=$PWD/data
  for args in "topo --input $d/hwloc/nvidiaDGX2.xml" "topo --json --input $d/hwloc-aws/p5en.xml" \
              "topo --json --input $d/nccl-topo/gpurig_h100-nvswitch.xml" "topo --input $d/nccl-topo/gpurig_bad-mismatch.xml" \
              "topo --json --input $d/published/dgx-a100.topo-m.txt" "topo --input $d/smi-topo/vllm-16840_mi250.showtopo.txt" \
              "topo --input $d/smi-topo/oci-mi355x.amd-smi-topology.txt" \
              "topo --json --input $d/smi-topo/amdsmi-changelog_2gpu-access-type.amd-smi-topology.json" \
              "topo --input $d/bad/nvsmi-bad-cell.txt" "topo --rig mi50-bridge" \
              "report --root $d/trees/epyc-riser" "topo --input $d/no-such.xml" "report" \
              "doctor --root $d/trees/doctor-malformed" "doctor --json --root $d/trees/doctor-healthy --kmsg $d/kmsg/xid-79-13.log" \
              "doctor" "doctor --rig wopr" "compare --list" \
              "compare --job infer --model llama-2-7b wopr tinybox-green" \
              "plan --model llama-2-70b --job infer --quant q4_k_m --rig asus-esc4000 --gpus 2 --tp 2" \
              "plan --params 7B --job full --input $d/hwloc/16intel64-manyVFs.xml" \
              "plan --model llama-2-70b --job qlora --rig tyan-s8030" \
              "plan --model $d/configs/deepseek-v3.json --job infer --gpu B200 --gpus 8 --tp 8" \
              "gpus" "STUB=vanish gpus --root $d/trees/epyc-riser" \
              "STUB=vanish bench --quick --size 4M --root $d/trees/epyc-riser" \
              "STUB=corrupt bench --quick --size 4M --no-sm --root $d/trees/epyc-riser" \
              "STUB=burn-stall bench --quick --size 4M --no-sm --allreduce-max 256K --allreduce-iters 100 --root $d/trees/epyc-riser" \
              "STUB=4gpu watch --count 3 --interval 0.1 --svg build/watch.svg --root $d/trees/epyc-riser" \
              "STUB=vanish watch --json --count 2 --interval 0.1 --root $d/trees/epyc-riser" \
              "STUB=xid watch --count 4 --interval 0.1 --root $d/trees/epyc-riser" \
              "STUB=a100-nvswitch watch --once --root $d/trees/hgx-a100" \
              "STUB=mi50-bridge topo --root $d/trees/mi50-bridge" \
              "STUB=tinybox-red-vanish watch --count 2 --interval 0.1 --root $d/trees/tinybox-red" \
              "STUB=mi50-xgmi-errors watch --count 2 --interval 0.1 --root $d/trees/mi50-bridge" \
              "STUB=mi50-xgmi-errors doctor --root $d/trees/mi50-bridge" \
              "STUB=mixed export --once --root $d/trees/mixed" \
              "STUB=tinybox-red-vanish bench --quick --size 4M --allreduce-max 1M --root $d/trees/tinybox-red" \
              "STUB=mi50-bridge burn --duration 2 --size 1M --root $d/trees/mi50-bridge" \
              "STUB=healthy burn --duration 2 --size 1M --json --root $d/trees/epyc-riser" \
              "STUB=burn-xid79 burn --duration 2 --size 1M --interval 0.5 --root $d/trees/epyc-riser" \
              "STUB=burn-gemm-wrong burn --duration 2 --size 1M --pattern pairs --root $d/trees/epyc-riser" \
              "STUB=vanish export --count 2 --interval 0.1 --listen none --textfile build --root $d/trees/epyc-riser"; do
    # STUB=SCENARIO: run against the stand-in driver libraries (tests/stub)
    local envs=()
    case "$args" in STUB=*)
      local scenario=${args%% *}
      envs=(env "GPURIG_DRIVER_DIR=$PWD/build/tests/stub" "GPURIG_STUB_SCENARIO=${scenario#STUB=}")
      args=${args#* } ;;
    esac
    set +e
    "${envs[@]}" "${vg[@]}" build/gpurig $args >/dev/null 2>/tmp/gpurig-valgrind.log
    local r=$?
    set -e
    if [ $r -eq 99 ]; then echo "valgrind: errors in gpurig $args"; cat /tmp/gpurig-valgrind.log; rc=1; fi
  done
  # the exporter under valgrind while a real Prometheus scrapes it and a GPU vanishes
  if ! GPURIG_MONITOR_VALGRIND=1 GPURIG_TEST_DATA=$PWD/tests/data GPURIG_TEST_STUB=$PWD/build/tests/stub \
       bash tests/monitor/prometheus.sh build/gpurig >/tmp/gpurig-valgrind.log 2>&1; then
    echo "valgrind: errors in gpurig export"; cat /tmp/gpurig-valgrind.log; rc=1
  fi
  [ $rc -eq 0 ] && echo "valgrind: clean"

  echo "== libFuzzer targets, ${FUZZ_SECONDS}s each"
  build build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DGPURIG_FUZZ=ON -DGPURIG_SANITIZE=ON \
        -DGPURIG_TESTS=OFF
  for f in xml xmlreader table sysfs rig dmi kmsg expect config nccl_topo nvsmi_topo rocmsmi_topo amdsmi_topo nccl_log \
           args report fleet http; do
    local work
    work=$(mktemp -d)
    # a fixed seed keeps CI reproducible; set GPURIG_FUZZ_SEED=0 for a random one
    if ! LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp build-fuzz/fuzz/fuzz_$f -max_total_time="$FUZZ_SECONDS" \
         -seed="${GPURIG_FUZZ_SEED:-1}" \
         -max_len=65536 -artifact_prefix="$work/" "$work" fuzz/corpus/$f fuzz/regress >"$work.log" 2>&1; then
      echo "fuzz_$f: FAILED"; tail -40 "$work.log"; rc=1
    else
      echo "fuzz_$f: $(grep -o 'Done [0-9]* runs' "$work.log") without a crash or leak"
    fi
    rm -rf "$work" "$work.log"
  done
  if [ $rc -eq 0 ]; then echo "all test stages passed"; else echo "some test stages failed"; fi
  return $rc
}

case "${1:-}" in
  run)
    install_missing "${RUN_PACKAGES[@]}"
    # the tests are not built: their tools are not installed (./setup.sh test adds them)
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPURIG_TESTS=OFF
    shift
    exec build/gpurig report "$@"
    ;;
  test)
    install_missing "${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    run_tests
    ;;
  *)
    echo "usage: ./setup.sh run|test" >&2
    exit 2
    ;;
esac
