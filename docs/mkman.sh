#!/usr/bin/env bash
# Writes gpurig's man page (gpurig(1)) from the binary's
# own --help texts, so that the page says what the code does: one section
# per command of the dispatch table, in its order. The build runs it
# (CMakeLists.txt, target `man`); `cmake --install` puts the page in
# share/man/man1.
# usage: docs/mkman.sh GPURIG VERSION [OUT]   (OUT: the file to write, else standard output)
set -euo pipefail
gpurig=$1
version=${2:-}
out=${3:-}
[ -z "$out" ] || exec >"$out.tmp" # renamed into place at the end, only when whole

# man(7) text: a backslash doubled, a line starting with . or ' escaped
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

top=$("$gpurig" --help)
commands=$(awk '/^Commands:/ {on = 1; next} on && /^$/ {on = 0} on && /^  [a-z]/ {print $1}' <<<"$top")

cat <<HEAD
.TH GPURIG 1 "$(date -u +%Y-%m -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")" "gpurig ${version}" "User Commands"
.SH NAME
gpurig \\- judge, check, watch and burn in multi-GPU machines: wiring, set-up, load
.SH SYNOPSIS
.B gpurig
[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]
.SH DESCRIPTION
.nf
HEAD
roff <<<"$top"
echo ".fi"
echo ".SH COMMANDS"
for c in $commands; do
  echo ".SS gpurig $c"
  echo ".nf"
  help=$("$gpurig" "$c" --help) # whole, then formatted
  roff <<<"$help"
  echo ".fi"
done
cat <<'TAIL'
.SH EXIT STATUS
0 ok; 1 warnings; 2 failures or bad input; 3 could not run (no driver, nothing to read);
4 a job that does not fit (plan, compare \-\-job).
.SH ENVIRONMENT
.TP
.B GPURIG_DATA
the data directory (data/*.tsv, rigs); else next to the binary, else the install prefix.
.TP
.B GPURIG_DRIVER_DIR
load the GPU driver libraries (NVML, CUDA, NCCL, cuBLAS) from this directory.
.SH FILES
.TP
.I share/gpurig/
the facts gpurig reads (GPU catalog, PCIe generations, Xids, measurements), each row with its source.
.SH SEE ALSO
.BR nvidia-smi (1),
.BR lstopo (1),
.BR hwloc-gather-topology (1);
the documents in docs/ of the source tree (architecture, doctor, monitor, burn, plan, predict).
TAIL
[ -z "$out" ] || mv "$out.tmp" "$out"
