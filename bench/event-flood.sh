#!/usr/bin/env bash
# bench/event-flood.sh: issue 31's event attack. Starts a fresh
# `edgebench-collector serve` (SQLite) on loopback, reads its RSS once idle,
# runs bench/eventflood against it (device lab/pi-1, default quota,
# publishes N events with a PAD-byte reason on made-up command ids)
# sampling VmRSS every 0.1 s until the store's event count has not moved
# for 3 s, and prints the idle RSS, the highest sample, VmHWM, the RSS
# after, the events stored, the store's growth, and what the collector
# logged of the refusals.
#
#   bench/event-flood.sh                                        # this tree's collector
#   COLLECTOR=/path/to/edgebench-collector bench/event-flood.sh  # another build (an older one)
#   N=1000 PAD=204800 bench/event-flood.sh
set -euo pipefail
BROKER_PORT=${BROKER_PORT:-18851}
WEB_PORT=${WEB_PORT:-18093}
N=${N:-1000}
PAD=${PAD:-204800}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
col=
trap '[ -n "$col" ] && kill "$col" 2>/dev/null; rm -rf "$work"' EXIT
. "$root/bench/lib.sh"

(cd "$root" && go build -o "$work/eventflood" ./bench/eventflood)
bench_collector
cat >"$work/accounts.yaml" <<'YAML'
collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-1, password: one}
YAML

events() { sqlite3 "file:$work/c.db?mode=ro" 'SELECT count(*) FROM events' 2>/dev/null || echo -1; }
size() { du -cb "$work"/c.db* | tail -1 | cut -f1; }

bench_serve "$BROKER_PORT" "$WEB_PORT" warn "$BROKER_PORT"
before=$(size)
max=0
start=$(date +%s.%N)
"$work/eventflood" -broker "127.0.0.1:$BROKER_PORT" -n "$N" -pad "$PAD" >"$work/flood.out" 2>&1 &
atk=$!
last=-2 still=0
while :; do
	r=$(rss "$col")
	[ "$r" -gt "$max" ] && max=$r
	if ! kill -0 "$atk" 2>/dev/null; then
		e=$(events)
		if [ "$e" = "$last" ]; then still=$((still + 1)); else still=0 last=$e; fi
		[ "$still" -ge 30 ] && break
	fi
	sleep 0.1
done
wait "$atk" || true
took=$(bc -l <<<"$(date +%s.%N) - $start - 3")
after=$(rss "$col")
peak=$(hwm "$col")
grown=$(($(size) - before))
printf 'collector RSS MB: idle %.1f, max sampled %.1f, VmHWM %.1f, after %.1f\n' "$(bc -l <<<"$idle/1024")" \
	"$(bc -l <<<"$max/1024")" "$(bc -l <<<"$peak/1024")" "$(bc -l <<<"$after/1024")"
printf 'events stored: %s of %s (settled %.1f s after the start); store grew %.1f MB\n' "$last" "$N" "$took" "$(bc -l <<<"$grown/1048576")"
cat "$work/flood.out"
kill "$col" && wait "$col" || true # the last sums are logged as it stops
col=
echo "collector's log lines about events: $(grep -c '"msg":"event' "$work/serve.log" || true)"
grep '"msg":"event' "$work/serve.log" | head -3 | cut -c1-300 || true
