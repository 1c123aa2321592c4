#!/bin/bash
# The Debian packages (cmake/package.cmake, docs/packaging.md), built from the build tree by
# cpack into a temporary directory (the build tree is not touched but for cpack's
# install_manifest files). Checks each package's fields, Depends against what the binaries
# link, its files and the unit's ExecStart, and lints it: a lintian error or warning fails.
# As root it then installs them into this system with dpkg -i, runs the installed gpurig
# (--version, topo --input on the bundled DGX-2, with the source tree's data hidden so that
# the data must come from /usr/share/gpurig), man -w, the bash completion, and purges them,
# checking every file is gone. It never touches a gpurig already on the system: it skips the
# install part then, as it does when not root (exit 77).
# Every step is bounded by timeout, all of them together well within ctest's TIMEOUT, so the
# purge at exit always runs.
# usage: deb.sh BUILD-DIR SOURCE-DIR [CPACK]
set -u
BUILD=${1:?usage: deb.sh BUILD-DIR SOURCE-DIR [CPACK]}
SRC=${2:?usage: deb.sh BUILD-DIR SOURCE-DIR [CPACK]}
CPACK=${3:-cpack}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for t in dpkg-deb lintian; do
  if ! command -v $t >/dev/null; then
    echo "FAIL: $t not found (apt-get install lintian; setup.sh's TEST_PACKAGES has it)"
    exit 1
  fi
done
if grep -q '^GPURIG_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  echo "SKIP: a sanitizer build; the packages are made from a plain build"
  exit 77
fi
BUILD=$(cd "$BUILD" && pwd)
SRC=$(cd "$SRC" && pwd)
VERSION=$("$BUILD/gpurig" --version | awk '{print $2}')
ARCH=$(dpkg --print-architecture)
WORK=$(mktemp -d)
installed="" # what this test installed: purged at exit whatever happened
dpkg_run() { # dpkg ARGS...: waits (up to 2 min) while another dpkg or apt holds its lock
  local out rc i
  for i in $(seq 60); do
    out=$(timeout -k 5 120 dpkg "$@" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && grep -qi 'lock' <<<"$out" && [ "$i" -lt 60 ]; then
      sleep 2
      continue
    fi
    break
  done
  printf '%s\n' "$out"
  return $rc
}
cleanup() {
  [ -z "$installed" ] || dpkg_run --purge $installed >/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# 1. build: one package per component group, named as Debian names them
if ! timeout -k 5 240 "$CPACK" --config "$BUILD/CPackConfig.cmake" -G DEB -B "$WORK/out" >"$WORK/cpack.log" 2>&1; then
  echo "FAIL: cpack -G DEB: $(tail -20 "$WORK/cpack.log")"
  exit 1
fi
MAIN=$WORK/out/gpurig_${VERSION}_${ARCH}.deb
MPI=$WORK/out/gpurig-mpi_${VERSION}_${ARCH}.deb
[ -f "$MAIN" ] || { echo "FAIL: no $(basename "$MAIN") in: $(ls "$WORK/out")"; exit 1; }
debs=("$MAIN")
if [ -x "$BUILD/gpurig-mpi" ]; then
  if [ -f "$MPI" ]; then debs+=("$MPI"); else fail "gpurig-mpi was built but no $(basename "$MPI")"; fi
fi

# 2. fields
field() { dpkg-deb -f "$1" "$2"; }
for f in Package Version Architecture Maintainer Section Priority Description Depends; do
  [ -n "$(field "$MAIN" $f)" ] || fail "gpurig: no $f field"
done
[ "$(field "$MAIN" Version)" = "$VERSION" ] || fail "gpurig: Version $(field "$MAIN" Version), the binary says $VERSION"
# Depends names the package of every library the binary links itself (NEEDED; ldd says where
# it is, dpkg -S whose it is)
deps=$(field "$MAIN" Depends)
for so in $(objdump -p "$BUILD/gpurig" | awk '$1 == "NEEDED" {print $2}'); do
  lib=$(ldd "$BUILD/gpurig" | awk -v so="$so" '$1 == so {print $3}')
  [ -n "$lib" ] || { fail "gpurig needs $so, which ldd does not find"; continue; }
  pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null)
  pkg=${pkg%%:*}
  [ -n "$pkg" ] || { fail "gpurig links $lib, which no package owns"; continue; }
  grep -qE "(^|, )$pkg( |,|$)" <<<"$deps" || fail "gpurig links $lib ($pkg), not in Depends: $deps"
done
grep -q 'pci.ids' <<<"$(field "$MAIN" Recommends)" || fail "gpurig: pci.ids is not recommended"
if [ ${#debs[@]} = 2 ]; then
  mdeps=$(field "$MPI" Depends)
  grep -q "gpurig (= $VERSION)" <<<"$mdeps" || fail "gpurig-mpi: Depends lacks gpurig (= $VERSION): $mdeps"
  grep -q 'libopenmpi' <<<"$mdeps" || fail "gpurig-mpi: Depends lacks Open MPI: $mdeps"
fi
# no maintainer scripts: nothing enables or starts the unit
ctrl=$(dpkg-deb --ctrl-tarfile "$MAIN" | tar -t | sed 's|^\./||' | grep -v '^$' | sort | tr '\n' ' ')
[ "$ctrl" = "control md5sums " ] || fail "gpurig: control files '$ctrl', want only control and md5sums"

# 3. files
dpkg-deb -c "$MAIN" | awk '{print $6}' | sed 's|^\./|/|' >"$WORK/files"
for p in /usr/bin/gpurig /usr/share/man/man1/gpurig.1.gz /usr/share/bash-completion/completions/gpurig \
         /usr/share/zsh/site-functions/_gpurig /usr/share/gpurig/pcie-links.tsv /usr/share/gpurig/gpus.tsv \
         /usr/share/gpurig/examples/nvidiaDGX2.xml /usr/share/gpurig/rigs/wopr.rig \
         /lib/systemd/system/gpurig-export.service /usr/share/doc/gpurig/copyright /usr/share/doc/gpurig/changelog.gz \
         /usr/share/doc/gpurig/examples/slurm/gpurig-nhc /usr/share/doc/gpurig/examples/slurm/gpurig-prolog \
         /usr/share/doc/gpurig/examples/slurm/gpurig-burn.sbatch; do
  grep -qx "$p" "$WORK/files" || fail "gpurig: $p is not in the package"
done
# every data file of the tree is in it
(cd "$SRC/data" && find . -type f | sed 's|^\./|/usr/share/gpurig/|' | sort) >"$WORK/data-want"
grep '^/usr/share/gpurig/' "$WORK/files" | grep -v '/$' | sort >"$WORK/data-got"
cmp -s "$WORK/data-want" "$WORK/data-got" || fail "gpurig: data files differ from data/: $(diff "$WORK/data-want" "$WORK/data-got" | head -5)"
mkdir "$WORK/x"
dpkg-deb -x "$MAIN" "$WORK/x"
unit=$WORK/x/lib/systemd/system/gpurig-export.service
grep -qx 'ExecStart=/usr/bin/gpurig export --listen 127.0.0.1:9400' "$unit" || fail "unit: no ExecStart=/usr/bin/gpurig on loopback: $(grep ExecStart "$unit" | head -2)"
! grep -q /usr/local "$unit" || fail "unit: still names /usr/local: $(grep -n /usr/local "$unit")"
clv=$(zcat "$WORK/x/usr/share/doc/gpurig/changelog.gz" | head -1 | sed -n 's/^gpurig (\([^)]*\)).*/\1/p')
[ "$clv" = "$VERSION" ] || fail "changelog's latest entry is $clv, the package $VERSION (cmake/debian/changelog)"
objdump -h "$WORK/x/usr/bin/gpurig" | grep -q '\.debug_info' && fail "gpurig: /usr/bin/gpurig is not stripped"

# 4. lintian
timeout -k 5 240 lintian --display-info --fail-on error,warning "${debs[@]}" >"$WORK/lintian" 2>&1
rc=$?
grep -v 'running with root privileges' "$WORK/lintian"
[ $rc = 0 ] || fail "lintian exit $rc (errors or warnings above)"
echo "lintian: $(grep -c '^E:' "$WORK/lintian") errors, $(grep -c '^W:' "$WORK/lintian") warnings, $(grep -c '^I:' "$WORK/lintian") info tags"

# 5. install, use, purge: root only, and only on a system without gpurig
skip=""
if [ "$(id -u)" != 0 ]; then
  skip="not root: dpkg -i, the installed gpurig and dpkg --purge were not tried"
else
  for p in gpurig gpurig-mpi; do
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)
    case "$st" in "" | "un "*) ;; *) skip="$p is on this system already (dpkg status '$st'): left alone, install part not tried" ;; esac
  done
  for p in /usr/bin/gpurig /usr/bin/gpurig-mpi /usr/share/gpurig /lib/systemd/system/gpurig-export.service; do
    [ ! -e "$p" ] || skip="$p exists (not from a package this test made): left alone, install part not tried"
  done
fi
if [ -n "$skip" ]; then
  [ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
  echo "SKIP: $skip (the packages were built and linted)"
  exit 77
fi
installed="gpurig"
[ ${#debs[@]} = 2 ] && installed="gpurig-mpi gpurig"
out=$(dpkg_run -i "${debs[@]}") || fail "dpkg -i: $out"
for p in $installed; do
  [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p")" = "ii " ] || fail "$p is not installed after dpkg -i"
done
clean_env=(env -i PATH=/usr/bin:/bin HOME="$WORK" LANG=C.UTF-8)
v=$(cd / && "${clean_env[@]}" gpurig --version 2>&1)
[ "$v" = "gpurig $VERSION" ] || fail "installed gpurig --version: '$v'"
# The binary also knows the source tree's data/ as a last resort; hide it (a private mount
# namespace, nothing changes outside it) so that topo must find /usr/share/gpurig.
ex=/usr/share/gpurig/examples/nvidiaDGX2.xml
topo="cd / && ${clean_env[*]} gpurig topo --input $ex"
if unshare -m true 2>/dev/null; then
  topo="mount -t tmpfs none '$SRC/data' && $topo"
  topo=(unshare -m sh -c "$topo")
else
  echo "note: unshare -m refused here: the source tree's data/ is not hidden from the installed gpurig"
  topo=(sh -c "$topo")
fi
out=$(timeout -k 5 60 "${topo[@]}" 2>&1)
rc=$?
{ [ $rc = 0 ] || [ $rc = 1 ]; } || fail "installed gpurig topo --input $ex: exit $rc: $(head -c 400 <<<"$out")"
grep -q '^2 sockets, 2 NUMA nodes, 16 GPUs' <<<"$out" || fail "installed gpurig topo: no 16 GPUs line: $(head -c 400 <<<"$out")"
grep -q 'NVIDIA DGX-2H' <<<"$out" || fail "installed gpurig topo: machine not named: $(head -2 <<<"$out")"
m=$(timeout 30 man -w gpurig 2>&1)
[ "$m" = /usr/share/man/man1/gpurig.1.gz ] || fail "man -w gpurig: '$m'"
c=$(timeout 30 bash -c '. /usr/share/bash-completion/completions/gpurig && complete -p gpurig' 2>&1)
grep -q 'complete .* gpurig$' <<<"$c" || fail "bash completion: '$c'"
ls /etc/systemd/system/*.wants/gpurig-export.service >/dev/null 2>&1 && fail "the package enabled gpurig-export"
if command -v systemctl >/dev/null; then
  e=$(timeout 30 systemctl is-enabled gpurig-export 2>&1)
  [ "$e" = disabled ] || fail "systemctl is-enabled gpurig-export: '$e', want disabled"
fi
# the installed unit as systemd reads it: its ExecStart exists, its Documentation= page opens
if command -v systemd-analyze >/dev/null; then
  v=$(timeout 60 systemd-analyze verify /lib/systemd/system/gpurig-export.service 2>&1) ||
    fail "systemd-analyze verify gpurig-export.service: $v"
fi
if [ ${#debs[@]} = 2 ]; then
  v=$(cd / && "${clean_env[@]}" timeout 30 gpurig-mpi --version 2>&1)
  [ "$v" = "gpurig $VERSION" ] || fail "installed gpurig-mpi --version: '$v'"
  # its page is gpurig's, by a link: man -w names the page the link leads to
  m=$(timeout 30 man -w gpurig-mpi 2>&1)
  [ -L /usr/share/man/man1/gpurig-mpi.1.gz ] && [ "$m" = /usr/share/man/man1/gpurig.1.gz ] ||
    fail "man -w gpurig-mpi: '$m'"
fi
# purge, then nothing of either package may be left
out=$(dpkg_run --purge $installed) || fail "dpkg --purge $installed: $out"
for p in $installed; do
  st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)
  case "$st" in "" | "un "*) ;; *) fail "$p: dpkg status '$st' after --purge" ;; esac
done
installed=""
for d in "${debs[@]}"; do
  dpkg-deb -c "$d" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$' >>"$WORK/all"
done
left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done <"$WORK/all")
[ -z "$left" ] || fail "left after --purge: $(head -5 <<<"$left")"
for d in /usr/share/gpurig /usr/share/doc/gpurig /usr/share/doc/gpurig-mpi; do
  [ ! -e "$d" ] || fail "$d left after --purge"
done

if [ $fails -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok: ${#debs[@]} package(s) built, linted, installed, run and purged"
