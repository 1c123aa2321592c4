#!/usr/bin/env bash
# Published measurements (data/measurements.tsv) against gpurig's predictions.
#
#   run.sh GPURIG               run every row; exit 1 if any prediction is outside its row's
#                               tolerance or a row is malformed, 0 otherwise
#   run.sh GPURIG --update-docs rewrite the generated tables in docs/predict.md and docs/plan.md
#
# A row gives a published figure, its unit, the tolerance gpurig is held to (percent of the
# published figure), the conditions, the gpurig command that predicts it (`args`, without
# `gpurig` and `--json`) and a jq path to the predicted figure in that command's JSON (`json`).
# The docs carry the same table between "<!-- measurements:QUANTITIES -->" and
# "<!-- /measurements -->" markers; this test fails when they are stale.
set -uo pipefail
GPURIG=${1:?usage: run.sh GPURIG [--update-docs]}
MODE=${2:-check}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TSV=${GPURIG_MEASUREMENTS:-$ROOT/data/measurements.tsv}
command -v jq >/dev/null || { echo "measurements: jq is needed (apt-get install jq)" >&2; exit 3; }
case "$GPURIG" in /*) ;; */*) GPURIG=$PWD/$GPURIG ;; esac
cd "$ROOT" # rows name inputs relative to the repository (tests/data/..., data/rigs/...)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

COLS="id quantity published unit tol_pct machine gpu engine model format ctx batch args json source notes"
header=$(grep -v '^#' "$TSV" | head -1)
[ "$header" = "$(echo $COLS | tr ' ' '\t')" ] || { echo "$TSV:header: expected the columns: $COLS" >&2; exit 2; }

bad=0 fail=0 n=0
RESULTS=$WORK/results.tsv
: > "$RESULTS"
line=0
while IFS= read -r row; do
  line=$((line + 1))
  case "$row" in '#'*|'') continue ;; esac
  [ "$row" = "$header" ] && continue
  IFS=$'\t' read -r id quantity published unit tol machine gpu engine model format ctx batch args json source notes <<<"$row"
  where="$TSV:$line: $id"
  if [ -z "${notes:-}" ] || [ -z "$json" ] || [ -z "$args" ]; then
    echo "$where: expected 16 tab-separated columns" >&2; bad=$((bad + 1)); continue
  fi
  # a URL, or one of the project's five seed documents (docs/predict.md, "Published measurements")
  case "$source" in http://*|https://*|seed:00[0-4]' '*) ;;
    *) echo "$where: source is neither a URL nor seed:00N TITLE" >&2; bad=$((bad + 1)); continue ;; esac
  if ! awk -v p="$published" -v t="$tol" 'BEGIN { exit !(p + 0 > 0 && t + 0 > 0 && t + 0 <= 60) }'; then
    echo "$where: published must be a positive number and tol_pct in (0, 60]" >&2; bad=$((bad + 1)); continue
  fi
  n=$((n + 1))
  eval "set -- $args"
  if ! "$GPURIG" "$@" --json >"$WORK/out.json" 2>"$WORK/err"; then
    rc=$?
    # a plan that does not fit still prints its JSON; other non-zero exits are errors
    if ! jq -e . "$WORK/out.json" >/dev/null 2>&1; then
      echo "$where: gpurig $args exited $rc: $(head -1 "$WORK/err")" >&2; fail=$((fail + 1)); continue
    fi
  fi
  predicted=$(jq -r "$json" "$WORK/out.json" 2>/dev/null)
  case "$predicted" in ''|null|*[!0-9.eE+-]*)
    echo "$where: jq '$json' gives '$predicted', not a number" >&2; fail=$((fail + 1)); continue ;;
  esac
  verdict=$(awk -v p="$published" -v q="$predicted" -v t="$tol" 'BEGIN {
    e = (q - p) / p * 100; printf "%+.1f\t%s", e, (e <= t && e >= -t) ? "ok" : "OUT" }')
  err=${verdict%%$'\t'*}
  ok=${verdict##*$'\t'}
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$quantity" "$published" "$predicted" "$unit" \
    "$err" "$tol" "$ok" "$machine" "$source" "$gpu" >>"$RESULTS"
  if [ "$ok" != ok ]; then
    echo "$where: published $published $unit, predicted $predicted ($err%, tolerance ±$tol%): gpurig $args" >&2
    fail=$((fail + 1))
  fi
done < "$TSV"

# The markdown table of the rows whose quantity is in the list.
table() { # quantities (comma-separated)
  echo "| id | what | machine | published | predicted | error | tolerance | source |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -F'\t' -v qs="$1" 'BEGIN { n = split(qs, a, ","); for (i = 1; i <= n; i++) want[a[i]] = 1 }
    want[$2] { src = $10 ~ /^http/ ? "[link](" $10 ")" : $10
               pred = $4 + 0 >= 1e5 ? sprintf("%.0f", $4) : $4 + 0 >= 100 ? sprintf("%.1f", $4) : sprintf("%.4g", $4)
               printf "| %s | %s | %s | %s %s | %s %s | %s%% | ±%s%% | %s |\n",
               $1, $2, $9, $3, $5, pred, $5, $6, $7, src }' "$RESULTS"
}

# Rewrites (or checks) every generated block of one doc.
docs() { # file
  local f=$1 out=$WORK/doc.md
  : > "$out"
  local in_block=0
  while IFS= read -r l; do
    if [ $in_block = 0 ]; then
      printf "%s\n" "$l" >>"$out"
      case "$l" in '<!-- measurements:'*' -->')
        q=${l#<!-- measurements:}; q=${q% -->}; table "$q" >>"$out"; in_block=1 ;;
      esac
    elif [ "$l" = "<!-- /measurements -->" ]; then
      printf "%s\n" "$l" >>"$out"; in_block=0
    fi
  done < "$f"
  if [ "$MODE" = --update-docs ]; then
    cmp -s "$out" "$f" || cp "$out" "$f"
  elif ! cmp -s "$out" "$f"; then
    echo "measurements: $f: the generated table is stale (run: bash tests/measurements/run.sh GPURIG --update-docs)" >&2
    diff "$f" "$out" | head -20 >&2
    bad=$((bad + 1))
  fi
}
for d in "$ROOT/docs/predict.md" "$ROOT/docs/plan.md"; do docs "$d"; done

ok=$(awk -F'\t' '$8 == "ok"' "$RESULTS" | wc -l)
echo "measurements: $ok of $n rows within their tolerance; $fail outside or failed; $bad malformed or stale"
[ $fail -eq 0 ] && [ $bad -eq 0 ] && [ $n -gt 0 ]
