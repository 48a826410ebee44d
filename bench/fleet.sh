#!/usr/bin/env bash
# Fleet scale: DEVICES simulated devices (default 1000) on real MQTT
# connections to one edgebench-collector with its embedded broker, each
# publishing RESULTS results (default 5). Prints results/s stored and
# acked, checks that none was lost or doubled, and the collector's peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES=${DEVICES:-1000}
RESULTS=${RESULTS:-5}
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

go build -o "$tmp/edgebench-collector" ./cmd/edgebench-collector
go build -o "$tmp/fleet" ./bench/fleet
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mqtt=$(port); web=$(port)
"$tmp/fleet" -devices "$DEVICES" -write-accounts "$tmp/accounts.yaml"
"$tmp/edgebench-collector" serve --db "$tmp/edgebench.db" --listen "127.0.0.1:$mqtt" --web "127.0.0.1:$web" \
	--accounts "$tmp/accounts.yaml" --log-level warn &
pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$mqtt") 2>/dev/null && break; sleep 0.1; done
rss0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
"$tmp/fleet" -broker "tcp://127.0.0.1:$mqtt" -devices "$DEVICES" -results "$RESULTS" -timeout 2m -db "$tmp/edgebench.db"
awk -v r0="$rss0" '/VmHWM/ {hwm=$2} /VmRSS/ {rss=$2} END {printf "collector RSS: %d MB at start, %d MB now, %d MB peak\n", r0/1024, rss/1024, hwm/1024}' "/proc/$pid/status"
kill -TERM "$pid"; wait "$pid" || true
