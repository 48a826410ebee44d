#!/usr/bin/env bash
# bench/quota-flood.sh: issue 19's quota attack. Starts a fresh
# `edgebench-collector serve` (SQLite) on loopback, reads its RSS once idle,
# runs bench/quotaflood against it (device lab/pi-1 publishes N results of
# 195 KB while lab/pi-2 is triggered every 0.5 s) sampling VmRSS every 0.1 s,
# and prints the idle RSS, the highest sample, VmHWM, the RSS after, the
# store's size, and quotaflood's figures: the flood's acks and rejections
# and pi-2's trigger latency, idle and during the flood.
#
# SERIES=1 is issue 31's attack on /metrics instead: pi-2 sends results
# of 5 server labels, then pi-1 sends N results each with a new server
# label and a start time 23 h ahead (PAD=0: no padded label; pi-1's burst
# raised to N, what the default quota lets in over N/120 minutes); it
# prints the series /metrics exports of each device after the flood.
#
#   bench/quota-flood.sh                                       # this tree's collector
#   COLLECTOR=/path/to/edgebench-collector bench/quota-flood.sh  # another build (an older one)
#   N=3000 PAD=200000 bench/quota-flood.sh
#   SERIES=1 N=2100 bench/quota-flood.sh
set -euo pipefail
BROKER_PORT=${BROKER_PORT:-18841}
WEB_PORT=${WEB_PORT:-18092}
N=${N:-3000}
SERIES=${SERIES:-}
if [ -n "$SERIES" ]; then PAD=${PAD:-0}; else PAD=${PAD:-200000}; fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
col=
trap '[ -n "$col" ] && kill "$col" 2>/dev/null; rm -rf "$work"' EXIT
. "$root/bench/lib.sh"

(cd "$root" && go build -o "$work/quotaflood" ./bench/quotaflood)
bench_collector
quota= flags=
if [ -n "$SERIES" ]; then quota=", quota: {burst_results: $N}" flags=-series; fi
cat >"$work/accounts.yaml" <<YAML
collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-1, password: one$quota}
  - {fleet: lab, id: pi-2, password: two}
YAML

bench_serve "$BROKER_PORT" "$WEB_PORT" error "$BROKER_PORT"
before=$(du -cb "$work"/c.db* | tail -1 | cut -f1)
"$work/quotaflood" -broker "127.0.0.1:$BROKER_PORT" -web "127.0.0.1:$WEB_PORT" -n "$N" -pad "$PAD" $flags >"$work/flood.out" 2>&1 &
atk=$!
bench_sample "$atk"
wait "$atk" || true
sleep 1
after=$(rss "$col")
peak=$(hwm "$col")
db=$(du -cb "$work"/c.db* | tail -1 | cut -f1)
printf 'collector RSS MB: idle %.1f, max sampled %.1f, VmHWM %.1f, after %.1f; store %.0f MB (grew %.1f MB)\n' "$(bc -l <<<"$idle/1024")" \
	"$(bc -l <<<"$max/1024")" "$(bc -l <<<"$peak/1024")" "$(bc -l <<<"$after/1024")" "$(bc -l <<<"$db/1048576")" "$(bc -l <<<"($db-$before)/1048576")"
cat "$work/flood.out"
