#!/usr/bin/env bash
# gpurig watch's full-screen view driven in a real terminal: tmux runs it on
# a copy of tests/data/trees/epyc-riser (stand-in NVIDIA libraries), the test
# reads the screen (capture-pane), raises a root port's AER count, presses s,
# p and q (send-keys), resizes the window (80x24 and 100x30: the link and
# replay columns stay, nothing wraps, no fragment stays), and checks the
# terminal is given back (no alternate screen, echo on) after q and after
# SIGTERM.
# usage: tmux.sh GPURIG   (env: GPURIG_TEST_DATA, GPURIG_TEST_STUB)
set -euo pipefail
gpurig=$1
command -v tmux >/dev/null || { echo "tmux.sh: tmux is not installed (setup.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
sock=$work/tmux.sock
t() { tmux -S "$sock" "$@"; }
cleanup() { t kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "tmux.sh: FAIL: $*" >&2; echo "--- screen:" >&2; t capture-pane -p -t "${target:-w}" >&2 2>/dev/null || true; exit 1; }
. "$(dirname "$0")/lib.sh" # free_port, until_ok
screen_has() { t capture-pane -p -t "$target" | grep -q -- "$1"; }

cp -a "$GPURIG_TEST_DATA/trees/epyc-riser" "$work/tree"
aer=$work/tree/sys/devices/pci0000:00/0000:00:03.1/aer_dev_correctable
# the shell after gpurig records its exit status and the terminal's state
run="env GPURIG_DRIVER_DIR='$GPURIG_TEST_STUB' TERM=screen '$gpurig' watch --root '$work/tree' --interval 0.2;
     echo \$? >'$work/exit'; stty -a >'$work/stty'; sleep 60"
t -f /dev/null new-session -d -s w -x 160 -y 48 "$run"
target=w
until_ok 15 screen_has "0000:41:00.0" || fail "no GPU rows on the screen"
screen_has "gpurig watch  4 GPU(s)  6 PCIe link(s)" || fail "no header"
[ "$(t display -p -t w '#{alternate_on}')" = 1 ] || fail "not on the alternate screen"
echo "screen: $(t capture-pane -p -t w | grep -c 0000:) lines name a bus id"

printf 'RxErr 19\nBadTLP 0\nTOTAL_ERR_COR 19\n' >"$aer.new" && mv "$aer.new" "$aer"
until_ok 10 screen_has "LINK GPU1 0000:02:00.0 <-> root port 0000:00:03.1 slot 5  AER corr at root port 0000:00:03.1: +12 last min" ||
  fail "the link with new AER errors is not shown"
until_ok 5 screen_has "12 correctable AER errors at root port 0000:00:03.1" || fail "no AER event"
echo "screen: $(t capture-pane -p -t w | grep -m1 '^LINK')"

t send-keys -t w s
until_ok 5 screen_has "sort: utilisation" || fail "s did not sort"
t send-keys -t w p
until_ok 5 screen_has "PAUSED" || fail "p did not pause"
t send-keys -t w p

# Narrow terminals (N7): at 80x24 and 100x30, and on the way between, no line is longer than
# the window (nothing wraps), every line on the screen is one the view draws (no fragment of a
# wider frame stays behind), and the link and replay columns are shown for all 4 GPUs.
shapes() { # width: what capture-pane shows fits the width and has only the view's own lines
  t capture-pane -p -t w | awk -v W="$1" '
    length($0) > W { print "longer than " W ": " $0; bad = 1; next }
    /^$/ || /^gpurig watch / || /^Xids from / || /^GPU +(bus id|state)/ || /^[0-9]+ +[^ ]/ || /^LINK / ||
    /^utilisation, the last / || /^GPU[0-9]+ +\[/ || /^events \(/ || /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] / ||
    /^              [^ ]/ || /^q quit/ { next }
    { print "not a line of the view: [" $0 "]"; bad = 1 }
    END { exit bad }'
}
riser_columns() { # the header names link and replays, and each GPU row has both
  screen_has "^GPU .* link  *replays" &&
    [ "$(t capture-pane -p -t w | grep -cE '^[0-3] .* G[0-9-]+/[0-9-]+ x[0-9-]+/[0-9-]+ +[0-9-]+( \+[0-9]+/min)?')" = 4 ]
}
t resize-window -t w -x 80 -y 24
until_ok 5 screen_has "^GPU bus id  *state util  *temp link" || fail "80x24: the table was not redrawn for 80 columns"
until_ok 5 riser_columns || fail "80x24: the link and replay columns are not shown for 4 GPUs"
shapes 80 >"$work/shapes" || fail "80x24: $(cat "$work/shapes")"
echo "80x24: $(t capture-pane -p -t w | grep -m1 '^GPU ')"
echo "80x24: $(t capture-pane -p -t w | grep -m1 '^1 ')"
t resize-window -t w -x 100 -y 30
until_ok 5 screen_has "^GPU .*pcie rx/tx link" || fail "100x30: the table was not redrawn for 100 columns"
until_ok 5 riser_columns || fail "100x30: the link and replay columns are not shown for 4 GPUs"
shapes 100 >"$work/shapes" || fail "100x30: $(cat "$work/shapes")"
t resize-window -t w -x 80 -y 24
until_ok 5 screen_has "^GPU bus id  *state util  *temp link" || fail "back to 80x24: not redrawn"
until_ok 5 riser_columns || fail "back to 80x24: the link and replay columns are not shown"
shapes 80 >"$work/shapes" || fail "back to 80x24, after 100x30: $(cat "$work/shapes")"
echo "100x30 and back to 80x24: link and replays for 4 GPUs, no line past the width, no fragment"

t resize-window -t w -x 70 -y 20
until_ok 5 screen_has "q quit" || fail "no footer after the resize"
t resize-window -t w -x 40 -y 8
t resize-window -t w -x 160 -y 48
until_ok 5 screen_has "0000:41:00.0" || fail "not redrawn after the resizes"
echo "resized to 70x20, 40x8 and back: redrawn"

t send-keys -t w q
until_ok 10 test -s "$work/exit" || fail "q did not quit"
[ "$(cat "$work/exit")" = 1 ] || fail "exit status $(cat "$work/exit"), expected 1 (AER warnings seen)"
until_ok 5 test -s "$work/stty" || fail "no stty"
grep -qw echo "$work/stty" && grep -qw icanon "$work/stty" || fail "terminal not restored after q: $(head -c 300 "$work/stty")"
[ "$(t display -p -t w '#{alternate_on}')" = 0 ] || fail "still on the alternate screen after q"
echo "q: exit 1, echo and icanon back, alternate screen off"

# SIGTERM ends it as cleanly
rm -f "$work/exit" "$work/stty"
t new-session -d -s k -x 120 -y 40 "$run"
target=k
until_ok 15 screen_has "0000:41:00.0" || fail "second view did not start"
pkill -TERM -f -- "watch --root $work/tree" || fail "no process to signal"
until_ok 10 test -s "$work/exit" || fail "SIGTERM did not end it"
until_ok 5 test -s "$work/stty" || fail "no stty after SIGTERM"
grep -qw echo "$work/stty" && grep -qw icanon "$work/stty" || fail "terminal not restored after SIGTERM"
[ "$(t display -p -t k '#{alternate_on}')" = 0 ] || fail "still on the alternate screen after SIGTERM"
echo "SIGTERM: exit $(cat "$work/exit"), terminal restored"
echo "tmux.sh: ok"
