#!/usr/bin/env bash
# bench/page-flood.sh: issue 31's attack on the expensive pages. Fills a
# SQLite store with N results of 20 devices over the last year (once;
# SEED=file reuses one), starts a fresh `edgebench-collector serve` on a
# copy of it, reads its RSS once idle, sends P parallel GETs of PAGE
# (bench/pageflood) sampling VmRSS every 0.1 s, and prints the idle RSS,
# the highest sample, VmHWM and each GET's status and time.
#
#   bench/page-flood.sh                                           # this tree's collector
#   COLLECTOR=/path/to/edgebench-collector bench/page-flood.sh     # another build (an older one)
#   N=60000 P=4 PAGE='/changes?days=365' SEED=/tmp/seed60k.db bench/page-flood.sh
set -euo pipefail
BROKER_PORT=${BROKER_PORT:-18861}
WEB_PORT=${WEB_PORT:-18094}
N=${N:-60000}
P=${P:-4}
PAGE=${PAGE:-/changes?days=365}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
col=
trap '[ -n "$col" ] && kill "$col" 2>/dev/null; rm -rf "$work"' EXIT
. "$root/bench/lib.sh"

(cd "$root" && go build -o "$work/pageflood" ./bench/pageflood)
bench_collector
if [ -z "${SEED:-}" ]; then
	SEED=$work/seed.db
	"$work/pageflood" -seed "$SEED" -results "$N"
fi
cp "$SEED" "$work/c.db"
cat >"$work/accounts.yaml" <<'YAML'
collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-1, password: one}
YAML

bench_serve "$BROKER_PORT" "$WEB_PORT" error "$WEB_PORT"
"$work/pageflood" -get "http://127.0.0.1:$WEB_PORT$PAGE" -parallel "$P" >"$work/flood.out" 2>&1 &
atk=$!
bench_sample "$atk"
wait "$atk" || true
peak=$(hwm "$col")
printf 'collector RSS MB: idle %.1f, max sampled %.1f, VmHWM %.1f\n' "$(bc -l <<<"$idle/1024")" "$(bc -l <<<"$max/1024")" "$(bc -l <<<"$peak/1024")"
cat "$work/flood.out"
