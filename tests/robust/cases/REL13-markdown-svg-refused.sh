# REL-13: report --markdown m.md with a symbolic link at m-wiring.svg: every
# target is checked before any is written, so the refusal leaves no m.md
# (which would link the refused diagram) and the link's target untouched.
expect_exit=2
expect_stderr='^gpurig: m-wiring\.svg: a symbolic link; gpurig writes only a new file or over a regular file'
setup() { ln -s "$OUTSIDE/victim" m-wiring.svg; }
run() { "$G" report --rig wopr --markdown m.md; }
check() { [ ! -e m.md ] && [ -L m-wiring.svg ] && [ "$(cat "$OUTSIDE/victim")" = precious ]; }
