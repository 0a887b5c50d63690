#!/bin/bash
# SPDX-License-Identifier: MIT
# slow-link.sh — issue 26 item 6: over a slow link, a remote recording
# (`mach6 record HOST:PORT/PID`) counts every scope the server dropped.
# Runs inside a private network namespace (unshare -n) whose loopback a
# token bucket (tc tbf) slows to about 50 KB/s: a real `mach6 serve`, a
# real producer flooding scopes, the real client recording 3 s. The drops
# in the client's capture (report --json) must equal what serve says it
# dropped (its log line at the stream's end), and be more than 0.
# Usage: slow-link.sh MACH6 READER_PRODUCER
set -euo pipefail

mach6=$1
producer=$2

if [ -z "${MACH6_SLOW_LINK_NETNS:-}" ]; then
  if ! unshare -n true 2>/dev/null; then
    echo "no network namespaces here (unshare -n): skipped"
    exit 77
  fi
  exec env MACH6_SLOW_LINK_NETNS=1 unshare -n bash "$0" "$@"
fi

# A link-sized MTU: a token bucket drops packets bigger than its burst.
ip link set lo mtu 1500 up
if ! tc qdisc add dev lo root tbf rate 400kbit burst 16kb latency 2s; then
  echo "tc cannot shape loopback here: skipped"
  exit 77
fi

dir=$(mktemp -d)
serve_pid=
producer_pid=
cleanup () {
  exec 3>&- || true
  [ -n "$producer_pid" ] && kill "$producer_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

export LANGUAGE=C
# A 256 KiB queue: drops begin within a second at this link's speed.
XDG_CONFIG_HOME=$dir/server MACH6_SERVE_QUEUE_BYTES=262144 \
  "$mach6" serve --listen 127.0.0.1:0 >"$dir/serve.out" 2>"$dir/serve.err" &
serve_pid=$!
for _ in $(seq 200); do
  grep -q '^Token: ' "$dir/serve.out" 2>/dev/null && break
  sleep 0.05
done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/serve.out" | head -1)
token=$(sed -n 's/^Token: //p' "$dir/serve.out")
[ -n "$port" ] && [ -n "$token" ] || { cat "$dir/serve.out" "$dir/serve.err"; echo "serve did not start"; exit 1; }

# The producer stops when its stdin closes (fd 3, at cleanup) or after 30 s.
mkfifo "$dir/stdin"
exec 3<>"$dir/stdin"
"$producer" --mode flood --frames 100000000 --sleep-us 20 --wait-attach <"$dir/stdin" &
producer_pid=$!
for _ in $(seq 200); do
  ls /dev/shm | grep -q "^mach6-[0-9]*-$producer_pid-" && break
  sleep 0.05
done

XDG_CONFIG_HOME=$dir/client MACH6_TOKEN=$token \
  "$mach6" record "127.0.0.1:$port/$producer_pid" -d 3 -o "$dir/remote.mach6" 2>&1 | tee "$dir/record.out"
"$mach6" report --json "$dir/remote.mach6" >"$dir/report.json"

# serve logs its counts when the stream ends, after the client detached.
for _ in $(seq 100); do
  grep -q "the stream of process $producer_pid ends" "$dir/serve.err" && break
  sleep 0.1
done
grep "the stream of process $producer_pid ends" "$dir/serve.err" || { cat "$dir/serve.err"; exit 1; }

python3 - "$dir/report.json" "$dir/serve.err" "$producer_pid" <<'EOF'
import json, re, sys
report = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
m = re.search(r"the stream of process %s ends.*?: (\d+) scopes dropped by the program, (\d+) by this server" % sys.argv[3], log)
ring, net = int(m.group(1)), int(m.group(2))
client = report["drops"]
threads = sum(t["drops"] for t in report["threads"])
events = sum(1 for _ in report["threads"])
print("server: %d dropped by the program, %d by the server; client capture: %d drops (%d over its threads), %.2f s"
      % (ring, net, client, threads, report["duration"]))
assert net > 0, "the link was not slow enough to make serve drop scopes"
assert client == threads
assert client == ring + net, "the client counted %d drops, the server %d" % (client, ring + net)
EOF
