#!/usr/bin/env bash
# A fuzzing campaign: each libFuzzer target for N minutes with a random seed
# (printed, so a finding can be replayed), then one line per target:
# runs, executions per second, coverage (edges) and features at start and
# end, corpus units added, peak memory, and what was found (crashes, leaks,
# timeouts, out-of-memory and slow units, as files under the work dir).
#
# Usage: fuzz/campaign.sh [-m MINUTES] [-j PARALLEL] [-o WORKDIR] [TARGET...]
#   MINUTES per target (default 10); PARALLEL targets at a time (default 1);
#   WORKDIR keeps the logs, grown corpora and artifacts (default: a new temp dir).
#   TARGETs default to every fuzz_* in build-fuzz/fuzz (build it as setup.sh does).
# Exit status: 0 when nothing was found, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=10 jobs=1 work=""
while getopts "m:j:o:" opt; do
  case $opt in
    m) minutes=$OPTARG ;;
    j) jobs=$OPTARG ;;
    o) work=$OPTARG ;;
    *) sed -n '2,13p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for b in build-fuzz/fuzz/fuzz_*; do [ -x "$b" ] && targets+=("$(basename "$b" | sed 's/^fuzz_//')"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "campaign: no fuzz targets in build-fuzz/fuzz (build them first)" >&2; exit 2; }
work=${work:-$(mktemp -d "${TMPDIR:-/tmp}/gpurig-campaign.XXXXXX")}
mkdir -p "$work"
export GPURIG_DATA=${GPURIG_DATA:-$PWD/data}

one() { # target
  local f=$1 seed=$(( (RANDOM << 15 | RANDOM) + 1 ))
  local dir=$work/$f
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -r fuzz/corpus/"$f"/. "$dir/corpus/" 2>/dev/null
  echo "$seed" > "$dir/seed"
  LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp build-fuzz/fuzz/fuzz_"$f" -max_total_time="$(awk -v m="$minutes" 'BEGIN { print int(m * 60) }')" \
    -seed="$seed" -max_len=1048576 -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$dir/corpus" fuzz/regress > "$dir/log" 2>&1
  echo $? > "$dir/rc"
}

summary() { # target
  local f=$1 dir=$work/$f log=$work/$1/log
  local runs eps rss added cov0 cov1 ft0 ft1 found
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  cov0=$(grep -m1 -o 'INITED cov: [0-9]*' "$log" | grep -o '[0-9]*$')
  ft0=$(grep -m1 'INITED' "$log" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*$')
  cov1=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  ft1=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  found=$(ls "$dir/artifacts" 2>/dev/null | sed 's/-.*//' | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
  printf '%-12s seed %-10s runs %-10s %6s/s  cov %s -> %s  ft %s -> %s  +%s units  %s MB  found: %s  (rc %s)\n' \
    "fuzz_$f" "$(cat "$dir/seed")" "${runs:-?}" "${eps:-?}" "${cov0:-?}" "${cov1:-?}" "${ft0:-?}" "${ft1:-?}" \
    "${added:-?}" "${rss:-?}" "${found:-none}" "$(cat "$dir/rc")"
}

echo "campaign: ${#targets[@]} targets x $minutes min, $jobs at a time; logs in $work"
running=0
for f in "${targets[@]}"; do
  one "$f" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
status=0
for f in "${targets[@]}"; do
  summary "$f"
  [ -z "$(ls "$work/$f/artifacts" 2>/dev/null)" ] || status=1
done
exit $status
