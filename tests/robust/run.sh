#!/usr/bin/env bash
# gpurig's robustness suite: every reproducer of the reliability review
# (docs/testing.md) is one case file in cases/. Each case runs under
# `timeout` in a fresh scratch directory and is held to:
#   - its exit status (expect_exit);
#   - exactly one line on stderr matching expect_stderr (an extended regex),
#     when the case sets it; none when it sets expect_stderr_lines=0;
#   - no file left behind in the scratch directory (other than those its
#     setup made, and the names in expect_new_files), and nothing changed in
#     the sentinel directory "$OUTSIDE" that stands for everything outside the
#     path asked;
#   - finishing within time_limit seconds (default 10);
#   - its own check function, when it has one.
#
# Usage: run.sh GPURIG_BINARY [CASE_NAME_SUBSTRING]
# Environment: GPURIG_TEST_DATA (tests/data), GPURIG_TEST_TREES (unpacked
# trees), GPURIG_TEST_STUB (stand-in libraries); GPURIG_DATA, GPURIG_PCI_IDS.
#
# A case file is bash, sourced in a subshell after lib.sh (shared helpers), with:
#   $G the binary; $T a fresh scratch directory (the case's working directory);
#   $OUTSIDE a directory with one file, victim, that must stay untouched;
#   $D tests/data; $TREES the unpacked trees; $STUB the stand-in libraries.
# It sets expect_exit, optionally expect_stderr, expect_stderr_lines,
# expect_new_files (space-separated names relative to $T), time_limit, and
# defines run() (the command under test), and optionally setup() and check()
# (check gets the stdout and stderr file names; it fails by returning non-zero).
set -u
G=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
filter=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
D=${GPURIG_TEST_DATA:-$here/../data}
TREES=${GPURIG_TEST_TREES:-}
STUB=${GPURIG_TEST_STUB:-}
export G D TREES STUB
work=$(mktemp -d "${TMPDIR:-/tmp}/gpurig-robust.XXXXXX")
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT

pass=0 fail=0
for case_file in "$here"/cases/*.sh; do
  name=$(basename "$case_file" .sh)
  case "$name" in *"$filter"*) ;; *) continue ;; esac
  T=$work/$name/t OUTSIDE=$work/$name/outside
  mkdir -p "$T" "$OUTSIDE"
  echo precious > "$OUTSIDE/victim"
  export T OUTSIDE
  out=$work/$name/stdout err=$work/$name/stderr
  # 1. setup, then the list of files the command may not add to
  (cd "$T" && expect_exit=0 && . "$here/lib.sh" && . "$case_file" && if declare -F setup >/dev/null; then setup; fi) \
    > "$work/$name/setup.log" 2>&1 || { echo "FAIL $name: setup failed"; cat "$work/$name/setup.log"; fail=$((fail+1)); continue; }
  (cd "$T" && find . -mindepth 1 | sort) > "$work/$name/before"
  # 2. the command, bounded in time
  limit=$(bash -c ". '$case_file'; echo \${time_limit:-10}")
  start=$(date +%s%N)
  (cd "$T" && timeout -k 2 "$limit" bash -c ". '$here/lib.sh'; . '$case_file'; run") > "$out" 2> "$err"
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  why=""
  # 3. the assertions
  unset expect_exit expect_stderr expect_stderr_lines expect_new_files
  eval "$(bash -c ". '$case_file'; declare -p expect_exit expect_stderr expect_stderr_lines expect_new_files 2>/dev/null")"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    why="did not finish within ${limit}s"
  elif [ "$rc" != "${expect_exit:-0}" ]; then
    why="exit $rc, expected ${expect_exit:-0}"
  fi
  nerr=$(wc -l < "$err")
  if [ -z "$why" ] && [ -n "${expect_stderr:-}" ]; then
    if [ "$nerr" -ne 1 ]; then why="$nerr lines on stderr, expected exactly one"
    elif ! grep -Eq -- "$expect_stderr" "$err"; then why="stderr does not match /$expect_stderr/"; fi
  fi
  if [ -z "$why" ] && [ -n "${expect_stderr_lines:-}" ] && [ "$nerr" -ne "$expect_stderr_lines" ]; then
    why="$nerr lines on stderr, expected $expect_stderr_lines"
  fi
  if [ -z "$why" ]; then
    (cd "$T" && find . -mindepth 1 | sort) > "$work/$name/after"
    for f in ${expect_new_files:-}; do echo "./$f"; done >> "$work/$name/before"
    extra=$(sort -u "$work/$name/before" | comm -13 - "$work/$name/after" | head -3 | tr '\n' ' ')
    [ -n "$extra" ] && why="left behind: $extra"
  fi
  if [ -z "$why" ] && { [ "$(cat "$OUTSIDE/victim" 2>/dev/null)" != precious ] || [ "$(ls -A "$OUTSIDE")" != victim ]; }; then
    why="wrote outside the path asked ($OUTSIDE changed)"
  fi
  if [ -z "$why" ] && bash -c ". '$case_file'; declare -F check >/dev/null"; then
    (cd "$T" && bash -c ". '$here/lib.sh'; . '$case_file'; check '$out' '$err'") > "$work/$name/check.log" 2>&1 || why="check failed: $(head -c 300 "$work/$name/check.log")"
  fi
  if [ -n "$why" ]; then
    echo "FAIL $name: $why"
    echo "  stderr: $(head -c 400 "$err")"
    fail=$((fail+1))
  else
    printf 'ok   %-40s exit %s  %d ms\n' "$name" "$rc" "$ms"
    pass=$((pass+1))
  fi
done
echo "robustness: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
