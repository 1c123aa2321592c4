#!/usr/bin/env bash
# The measurements test can fail: a copy of data/measurements.tsv with one
# published figure doubled must be refused for that row, and a row without a
# source must be refused as malformed.
set -uo pipefail
GPURIG=${1:?usage: selftest.sh GPURIG}
HERE=$(cd "$(dirname "$0")" && pwd)
TSV=$HERE/../../data/measurements.tsv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
status=0
# the first data row's published figure doubled
awk -F'\t' -v OFS='\t' '/^#/ || !seen++ { print; next } !done { $3 = $3 * 2; done = 1 } { print }' "$TSV" >"$WORK/doubled.tsv"
id=$(awk -F'\t' '/^#/ { next } n++ == 1 { print $1; exit }' "$TSV")
if GPURIG_MEASUREMENTS=$WORK/doubled.tsv bash "$HERE/run.sh" "$GPURIG" >/dev/null 2>"$WORK/err"; then
  echo "selftest: a doubled published figure passed" >&2; status=1
elif ! grep -q ": $id: published .* tolerance" "$WORK/err"; then
  echo "selftest: the doubled row $id was not named:" >&2; head -3 "$WORK/err" >&2; status=1
fi
awk -F'\t' -v OFS='\t' '/^#/ || !seen++ { print; next } !done { $15 = "somewhere"; done = 1 } { print }' "$TSV" >"$WORK/nosrc.tsv"
if GPURIG_MEASUREMENTS=$WORK/nosrc.tsv bash "$HERE/run.sh" "$GPURIG" >/dev/null 2>"$WORK/err" ||
   ! grep -q "source is neither a URL" "$WORK/err"; then
  echo "selftest: a row without a source was not refused" >&2; status=1
fi
[ $status = 0 ] && echo "measurements selftest: a doubled figure and a missing source are refused"
exit $status
