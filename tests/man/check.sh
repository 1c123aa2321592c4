#!/usr/bin/env bash
# The man page the build wrote (docs/mkman.sh) has a section for every
# command of the dispatch table, and groff formats it without a warning.
# usage: check.sh GPURIG MANPAGE
set -euo pipefail
gpurig=$1
page=$2
fails=0
[ -s "$page" ] || { echo "man: $page is missing or empty" >&2; exit 1; }
grep -q '^\.TH GPURIG 1 ' "$page" || { echo "man: no .TH line" >&2; fails=1; }
# whole outputs first: a reader that stops early (head, awk's exit) would
# break the writer's pipe, and pipefail would call that a failure
top=$("$gpurig" --help)
for c in $(awk '/^Commands:/ {on = 1; next} on && /^$/ {on = 0} on && /^  [a-z]/ {print $1}' <<<"$top"); do
  grep -qx ".SS gpurig $c" "$page" || { echo "man: no section for gpurig $c" >&2; fails=1; }
  # the section holds the command's --help, line for line (bar roff's escapes)
  help=$("$gpurig" "$c" --help)
  first=${help%%$'\n'*}
  grep -qF -- "$first" "$page" || { echo "man: gpurig $c's --help is not in its section" >&2; fails=1; }
done
if command -v groff >/dev/null; then
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1 || true)
  [ -z "$warn" ] || { echo "man: groff: $warn" >&2; fails=1; }
fi
[ $fails = 0 ] && echo "man: $(grep -c '^\.SS' "$page") command sections, groff formats it cleanly"
exit $fails
