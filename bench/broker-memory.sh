#!/usr/bin/env bash
# bench/broker-memory.sh: the collector's memory under the attacks of issue
# 11 on its embedded broker. For each attack it starts a fresh
# `edgebench-collector serve` on loopback, reads its RSS once idle, runs
# bench/brokerattack against it while sampling VmRSS every 0.1 s, and
# prints the idle RSS, the highest sample, VmHWM and the RSS after. The
# attack tool prints how many of its sockets the broker closed.
#
#   bench/broker-memory.sh                      # this tree's collector
#   COLLECTOR=/path/to/edgebench-collector bench/broker-memory.sh   # another build (an older one)
set -euo pipefail
BROKER_PORT=${BROKER_PORT:-18831}
WEB_PORT=${WEB_PORT:-18082}
HOLD=${HOLD:-15s}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
col=
trap '[ -n "$col" ] && kill "$col" 2>/dev/null; rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/brokerattack" ./bench/brokerattack)
if [ -z "${COLLECTOR:-}" ]; then
	(cd "$root" && go build -o "$work/edgebench-collector" ./cmd/edgebench-collector)
	COLLECTOR=$work/edgebench-collector
fi
cat >"$work/accounts.yaml" <<'EOF'
collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-1, password: one}
EOF

rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

printf '%-44s %8s %8s %8s %8s  %s\n' attack "idle MB" "max MB" "HWM MB" "after MB" "broker"
run() {
	local name=$1
	shift
	rm -f "$work"/c.db*
	"$COLLECTOR" serve --db "$work/c.db" --listen "127.0.0.1:$BROKER_PORT" --web "127.0.0.1:$WEB_PORT" \
		--accounts "$work/accounts.yaml" --log-level error >"$work/serve.log" 2>&1 &
	col=$!
	for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$BROKER_PORT") 2>/dev/null && break; sleep 0.1; done
	sleep 2
	local idle max=0 r
	idle=$(rss "$col")
	"$work/brokerattack" -broker "127.0.0.1:$BROKER_PORT" -hold "$HOLD" "$@" >"$work/attack.out" 2>&1 &
	local atk=$!
	while kill -0 "$atk" 2>/dev/null; do
		r=$(rss "$col")
		[ "$r" -gt "$max" ] && max=$r
		sleep 0.1
	done
	wait "$atk" || true
	sleep 1
	local after peak alive=""
	after=$(rss "$col")
	peak=$(hwm "$col")
	kill -0 "$col" 2>/dev/null || alive=" (the collector DIED)"
	printf '%-44s %8.1f %8.1f %8.1f %8.1f  %s%s\n' "$name" "$(bc -l <<<"$idle/1024")" "$(bc -l <<<"$max/1024")" \
		"$(bc -l <<<"$peak/1024")" "$(bc -l <<<"$after/1024")" "$(tail -1 "$work/attack.out")" "$alive"
	kill "$col" 2>/dev/null || true
	wait "$col" 2>/dev/null || true
	col=
}

run "8 CONNECTs announcing 256 MiB" -attack claim -n 8 -size 268435455
run "8 CONNECTs announcing 256 MiB, bytes follow" -attack claim -n 8 -size 268435455 -bytes
run "200 CONNECTs of 16,000 B, a byte a second" -attack claim -n 200 -size 16000 -bytes -slow
run "200 CONNECTs of 200 KiB, bytes follow" -attack claim -n 200 -size 204800 -bytes
run "1000 connections that never log in" -attack idle -n 1000
run "a device publishing 150 MiB" -attack publish -size 157286400 -bytes
run "a device publishing 600 x 256 KiB" -attack flood -n 600 -size 262144 -bytes
