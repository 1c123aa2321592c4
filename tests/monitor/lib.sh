# Shared by the monitor tests (sourced): a free loopback port and a bounded
# retry. Each script defines its own fail(), which free_port calls.

# free_port: a port nobody listens on, below the ephemeral range (32768-60999)
# that other tests' client connections take
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  fail "no free port"
}

# until_ok SECONDS COMMAND...: retries the command every 0.2 s until it
# succeeds (0) or the time is up (1)
until_ok() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.2; done
}
