#!/usr/bin/env bash
# bench/agent-idle.sh: the agent's idle footprint. It starts mosquitto on a
# loopback port, connects `edgebench agent` to it, leaves it idle (30 s
# heartbeats) for IDLE seconds, and prints its RSS, CPU time and CPU share,
# and the size of the stripped armv6 binary.
#
#   bench/agent-idle.sh            # IDLE=60
set -euo pipefail
IDLE=${IDLE:-60}
PORT=${PORT:-18883}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $agent $broker 2>/dev/null || true; rm -rf "$work"' EXIT
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || { echo "mosquitto is missing (apt-get install mosquitto)" >&2; exit 1; }
mosq=$(command -v mosquitto || echo /usr/sbin/mosquitto)

(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$work/edgebench" ./cmd/edgebench &&
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=6 go build -trimpath -ldflags '-s -w' -o "$work/edgebench-armv6" ./cmd/edgebench)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$PORT" >"$work/mosquitto.conf"
"$mosq" -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
broker=$!
sleep 0.5
EDGEBENCH_BROKER_URL=tcp://127.0.0.1:$PORT EDGEBENCH_DEVICE_ID=idle EDGEBENCH_STATE_DIR=$work/state \
	EDGEBENCH_SPOOL_DIR=$work/state/spool "$work/edgebench" agent 2>"$work/agent.log" &
agent=$!
sleep 2 # connect and settle
kill -0 "$agent" 2>/dev/null || { echo "the agent exited:" >&2; cat "$work/agent.log" >&2; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$agent/stat"; }
t0=$(ticks)
sleep "$IDLE"
t1=$(ticks)
hz=$(getconf CLK_TCK)
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$agent/status")
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$agent/status")
awk -v t0="$t0" -v t1="$t1" -v hz="$hz" -v idle="$IDLE" -v rss="$rss" -v hwm="$hwm" 'BEGIN {
	cpu = (t1 - t0) / hz
	printf "idle %d s: CPU %.2f s (%.3f %% of one core), RSS %.1f MiB (peak %.1f MiB)\n", idle, cpu, 100 * cpu / idle, rss / 1024, hwm / 1024 }'
printf 'stripped armv6 binary: %d bytes\n' "$(stat -c %s "$work/edgebench-armv6")"
grep -q "connected" "$work/agent.log" || { echo "the agent never connected:" >&2; cat "$work/agent.log" >&2; exit 1; }
