# Shared by run.sh and selftest.sh: the checks that one `gpurig report`
# output (text and --json) does not contradict itself. Sourced by bash.
#
# flatten JSON: gpurig's JSON (jansson, one key or value per line) as
# path=value lines: machine_report.machine.packages[0].cpu_vendor=GenuineIntel.
# Strings lose their quotes (escapes stay as written); null stays null.
flatten() {
  awk '
    function top() { return depth ? name[depth] : "" }
    function here(   p, i) {
      p = ""
      for (i = 1; i <= depth; i++) p = p name[i]
      return p
    }
    # the name a new member or element gets inside the current container
    function child(key,   n) {
      if (depth && kind[depth] == "arr") { n = "[" idx[depth] "]"; idx[depth]++; return n }
      return (depth > 1 || (depth == 1 && kind[1] == "obj" && name[1] != "")) ? "." key : key
    }
    {
      line = $0
      sub(/^[ \t]+/, "", line)
      sub(/[ \t\r]+$/, "", line)
      if (line == "") next
      key = ""
      if (line ~ /^"([^"\\]|\\.)*": /) {
        match(line, /^"([^"\\]|\\.)*": /)
        key = substr(line, 2, RLENGTH - 4)
        line = substr(line, RLENGTH + 1)
      }
      sub(/,$/, "", line)
      if (line == "{" || line == "[") {
        n = depth == 0 ? "" : child(key)
        depth++
        name[depth] = n
        kind[depth] = line == "{" ? "obj" : "arr"
        idx[depth] = 0
        next
      }
      if (line == "}" || line == "]") { depth--; next }
      n = child(key)
      if (line == "[]" || line == "{}") { print here() n "=" line; next }
      if (line ~ /^".*"$/) line = substr(line, 2, length(line) - 2)
      print here() n "=" line
    }
  ' "$1"
}

# value FLAT PATH: the value at PATH (exact), empty when absent.
value() {
  awk -v p="$2" 'index($0, p "=") == 1 { print substr($0, length(p) + 2); exit }' "$1"
}

# count FLAT REGEX: how many lines match.
count() {
  grep -cE "$2" "$1"
}

# same A B: two GB/s figures as printed agree (one is rounded to 0.1).
same() {
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.051) }'
}

# fail INPUT RULE A B: one line naming the input, the rule and the two
# statements that disagree.
fail() {
  printf 'FAIL %s: %s:\n    %s\n    %s\n' "$1" "$2" "$3" "$4"
  problems=$((problems + 1))
}

# first TEXT REGEX: the first line of TEXT matching REGEX, cut to 300 characters.
first() {
  grep -m1 -E -- "$2" "$1" | cut -c1-300
}

# check_report NAME TEXT JSON: every rule on one report; adds to $problems
# and prints one FAIL line per broken rule.
check_report() {
  local name=$1 text=$2 json=$3 flat sockets ngpus pairs nvpairs a b v
  flat=$(mktemp) || exit 2
  flatten "$json" >"$flat"
  local mr=machine_report

  # 1. a link is named by its rate when its generation and width are unknown
  if grep -qE 'Gen0|(^|[^0-9A-Za-z])x0([^0-9A-Za-z.]|$)' "$text"; then
    fail "$name" "a link named Gen0 or x0" "$(first "$text" 'Gen0|(^|[^0-9A-Za-z])x0([^0-9A-Za-z.]|$)')" \
         "(a link known only by its rate is named by its rate)"
  fi

  # 2. one socket: nothing to cross
  sockets=$(count "$flat" "^$mr\.machine\.packages\[[0-9]+\]\.os_index=")
  if [ "$sockets" -le 1 ] && grep -qiE 'crossing a socket|crosses a socket|both sockets|between sockets' "$text"; then
    fail "$name" "a socket crossed on a machine with $sockets socket(s)" \
         "$(first "$text" '[Cc]rossing a socket|crosses a socket|both sockets|between sockets')" \
         "JSON machine.packages: $sockets"
  fi

  # 3. GPUs all joined by NVLink: their traffic crosses no socket link
  ngpus=$(count "$flat" "^$mr\.gpus\[[0-9]+\]\.index=")
  pairs=$(count "$flat" "^$mr\.gpu_pairs\[[0-9]+\]\.level=")
  nvpairs=$(count "$flat" "^$mr\.gpu_pairs\[[0-9]+\]\.level=NV")
  if [ "$ngpus" -ge 2 ] && [ "$pairs" -gt 0 ] && [ "$pairs" -eq "$nvpairs" ] &&
     grep -qE 'crosses the link between|crosses the inter-socket|ring crosses' "$text"; then
    fail "$name" "GPU traffic said to cross the socket link while NVLink joins every pair" \
         "$(first "$text" 'crosses the link between|crosses the inter-socket|ring crosses')" \
         "JSON gpu_pairs: all $pairs pairs NV#"
  fi

  # 4. host-staged hops counted as the JSON counts them
  local hosts
  hosts=$(value "$flat" "$mr.prediction.allreduce_nccl_default.hops_host")
  if [ -n "$hosts" ] && [ "$hosts" = "$ngpus" ] && grep -q 'some hops staged' "$text"; then
    fail "$name" "\"some\" hops staged where every hop is" "$(first "$text" 'some hops staged')" \
         "JSON allreduce_nccl_default.hops_host: $hosts of $ngpus"
  fi
  v=$(sed -n 's/.* \([0-9][0-9]*\) of [0-9][0-9]* ring hops go through host memory.*/\1/p' "$text" | head -n 1)
  if [ -n "$v" ] && [ -n "$hosts" ] && [ "$v" != "$hosts" ]; then
    fail "$name" "host-staged ring hops" "$(first "$text" 'ring hops go through host memory')" \
         "JSON allreduce_nccl_default.hops_host: $hosts"
  fi

  # 5. no NCCL_P2P_LEVEL setting offered where no pair can do P2P (not even the list of levels)
  local capable
  capable=$(count "$flat" "^$mr\.prediction\.p2p_matrix\[[0-9]+\]\[[0-9]+\]=(p2p|nvlink)$")
  if [ -n "$(value "$flat" "$mr.prediction.p2p_groups")" ] && [ "$capable" -eq 0 ] &&
     grep -qE 'NCCL_P2P_LEVEL=' "$text"; then
    fail "$name" "NCCL_P2P_LEVEL advice where no GPU pair can do P2P" \
         "$(first "$text" 'NCCL_P2P_LEVEL=')" "JSON p2p_matrix: no p2p or nvlink pair"
  fi

  if [ -n "$(value "$flat" "$mr.prediction.p2p_groups")" ] && [ "$capable" -eq 0 ] &&
     grep -qE 'P2P inside the switch runs|peer-to-peer over PCIe|joined by NVLink' "$text"; then
    fail "$name" "P2P promised where no GPU pair can do P2P" \
         "$(first "$text" 'P2P inside the switch runs|peer-to-peer over PCIe|joined by NVLink')" \
         "JSON p2p_matrix: no p2p or nvlink pair"
  fi

  # 6. the headline all-reduce figure is the training verdict's
  a=$(sed -n 's/^All-reduce bus bandwidth (nccl-tests busbw, large messages): \([0-9.]*\) GB\/s with .*/\1/p' "$text" | head -n 1)
  b=$(sed -n 's/.*training across [0-9]* GPUs: Predicted all-reduce bus bandwidth \([0-9.]*\) GB\/s.*/\1/p' "$text" | head -n 1)
  if [ -n "$a" ] && [ -n "$b" ] && ! same "$a" "$b"; then
    fail "$name" "headline all-reduce figure differs from the training verdict's" \
         "$(first "$text" '^All-reduce bus bandwidth')" "$(first "$text" 'training across [0-9]+ GPUs: Predicted')"
  fi
  v=$(value "$flat" "$mr.prediction.allreduce_nccl_default.busbw_gbps")
  if [ -n "$a" ] && [ -n "$v" ] && [ "$v" != null ] && ! same "$a" "$v"; then
    fail "$name" "headline all-reduce figure differs from the JSON's" "$(first "$text" '^All-reduce bus bandwidth')" \
         "JSON allreduce_nccl_default.busbw_gbps: $v"
  fi
  a=$(sed -n 's/^  With NCCL_P2P_LEVEL=\([A-Z]*\): \([0-9.]*\) GB\/s.*/\1 \2/p' "$text" | head -n 1)
  b=$(sed -n 's/.*training across.* With NCCL_P2P_LEVEL=\([A-Z]*\): \([0-9.]*\) GB\/s.*/\1 \2/p' "$text" | head -n 1)
  if [ "$a" != "$b" ]; then
    fail "$name" "the raised NCCL_P2P_LEVEL figure differs between headline and training verdict" \
         "headline: ${a:-(none)}" "training verdict: ${b:-(none)}"
  fi

  # 7. one inter-socket figure
  local figs socket
  socket=$(value "$flat" "$mr.machine.inter_socket_nccl_bw_gbps")
  figs=$( { grep -oE 'inter-socket link \([0-9.]+ GB/s' "$text" | grep -oE '[0-9.]+'
            grep -oE 'NCCL counts [0-9.]+ GB/s' "$text" | grep -oE '[0-9.]+'
            [ -n "$socket" ] && [ "$socket" != null ] && echo "$socket"
            awk -F= -v p="$mr.gpu_pairs[" '
              index($1, p) == 1 && $1 ~ /\.bottleneck$/ { k = $1; sub(/\.bottleneck$/, "", k); via[k] = $2 }
              index($1, p) == 1 && $1 ~ /\.nccl_bw_gbps$/ { k = $1; sub(/\.nccl_bw_gbps$/, "", k); bw[k] = $2 }
              END { for (k in via) if (via[k] == "inter_socket") print bw[k] }' "$flat"; } | sort -u)
  if [ -n "$figs" ] && [ "$(echo "$figs" | awk 'NR == 1 { lo = hi = $1 } { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { print (hi - lo > 0.051) }')" = 1 ]; then
    fail "$name" "more than one inter-socket figure" "figures: $(echo "$figs" | tr '\n' ' ')" \
         "$(first "$text" 'inter-socket link \(|NCCL counts')"
  fi

  # 8. hives and P2P groups: each hive lies in one group, and every count agrees
  local hives jgroups jlargest thives tgroups tlargest summary
  hives=$(count "$flat" "^$mr\.hives\[[0-9]+\]\.gpus\[0\]=")
  jgroups=$(value "$flat" "$mr.prediction.p2p_groups")
  jlargest=$(value "$flat" "$mr.prediction.largest_p2p_group")
  summary=$(sed -n '2s/.*, \([0-9][0-9]*\) P2P hives\{0,1\} (.*/\1/p' "$text")
  if [ -n "$summary" ] && [ "$summary" != "$hives" ]; then
    fail "$name" "hive count" "$(sed -n 2p "$text" | cut -c1-300)" "JSON hives: $hives"
  fi
  thives=$(sed -n 's/^Peer-to-peer:.*[^0-9]\([0-9][0-9]*\) P2P hives\{0,1\} .*/\1/p' "$text" | head -n 1)
  if [ -n "$thives" ] && [ "$thives" != "$hives" ]; then
    fail "$name" "hive count" "$(first "$text" '^Peer-to-peer:')" "JSON hives: $hives"
  fi
  tgroups=$(sed -n 's/^Peer-to-peer: .* join into \([0-9][0-9]*\) P2P groups\{0,1\}.*/\1/p' "$text" | head -n 1)
  if [ -n "$tgroups" ]; then
    if [ "$tgroups" != "$jgroups" ] || [ "$tgroups" -gt "$hives" ]; then
      fail "$name" "P2P groups against hives (each hive lies in one group)" "$(first "$text" '^Peer-to-peer:')" \
           "JSON p2p_groups: $jgroups, hives: $hives"
    fi
  elif [ -n "$jgroups" ] && [ "$jgroups" != "$hives" ] && grep -qE '^Peer-to-peer: [0-9]+ P2P hive' "$text"; then
    fail "$name" "P2P groups said to be the hives" "$(first "$text" '^Peer-to-peer:')" \
         "JSON p2p_groups: $jgroups, hives: $hives"
  fi
  if [ -n "$jgroups" ] && [ "$jgroups" -gt "$hives" ]; then
    fail "$name" "more P2P groups than hives" "JSON p2p_groups: $jgroups" "JSON hives: $hives"
  fi
  tlargest=$(sed -n 's/.*training across.* \([0-9][0-9]*\) of [0-9][0-9]* GPUs can exchange gradients peer-to-peer.*/\1/p' "$text" | head -n 1)
  if [ -n "$tlargest" ] && [ "$tlargest" != "$jlargest" ]; then
    fail "$name" "largest P2P group" "$(first "$text" 'GPUs can exchange gradients peer-to-peer')" \
         "JSON largest_p2p_group: $jlargest"
  fi
  tlargest=$(sed -n 's/^Peer-to-peer: .*join into .*the largest with \([0-9][0-9]*\) of.*/\1/p' "$text" | head -n 1)
  if [ -n "$tlargest" ] && [ "$tlargest" != "$jlargest" ]; then
    fail "$name" "largest P2P group" "$(first "$text" '^Peer-to-peer:')" "JSON largest_p2p_group: $jlargest"
  fi
  rm -f "$flat"
}
