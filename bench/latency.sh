#!/usr/bin/env bash
# bench/latency.sh: the latency the seed's `wrk -t10 -c10 -d30s --latency`
# reports, from wrk and from edgebench wrk, against Little's law.
#
# It starts its own nginx on 127.0.0.1 (1 worker, access_log off, a
# 612-byte index.html) pinned to SERVER_CPU, and runs, pinned to GEN_CPU,
# `wrk -tT -c10 -dDs --latency` and `edgebench wrk` with the same flags
# (and, with OLD=path, another edgebench build) for each T of THREADS, in
# alternating order from one round to the next. For each run it prints
# the mean latency and p99 the report prints (wrk's, with its correction
# for coordinated omission), req/s, and Little's bound on the mean:
# connections / req/s. A mean above the bound is the generator's own
# stalls: a connection carries one request at a time, so its requests'
# latencies add up to at most the run (wrk's correction adds the requests
# a stall held back, so wrk's own mean is a little above it). Then the
# medians per tool and T.
#
#   bench/latency.sh                          # 5 rounds of 4 s, -t2, -t4, -t10
#   ROUNDS=7 OLD=/tmp/main/edgebench bench/latency.sh
#   GEN_CPU=0,1 SERVER_CPU=0,1 bench/latency.sh   # nothing pinned apart, as the seed's box
#
# Needs nginx, wrk, taskset, curl; builds edgebench (or EDGEBENCH=path).
set -euo pipefail

CONNS=${CONNS:-10}
DURATION=${DURATION:-4}
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-"2 4 10"}
PORT=${PORT:-18491}
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
EDGEBENCH=${EDGEBENCH:-}
OLD=${OLD:-}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/bench/lib.sh"

bench_need latency.sh "apt-get install nginx-light wrk curl" nginx wrk taskset curl
bench_edgebench
bench_nginx "$PORT" 4096 "" ""
url="http://127.0.0.1:$PORT/index.html"
echo "load before: $(cat /proc/loadavg)"

tools="wrk edgebench${OLD:+ old}"
# measure TOOL T: one run; prints mean_us p99_us rps
measure() {
	local cmd
	bench_cmd "$1" wrk
	taskset -c "$GEN_CPU" "${cmd[@]}" "-t$2" "-c$CONNS" "-d${DURATION}s" --latency "$url" 2>/dev/null |
		awk 'function us(s) { if (s ~ /us$/) return s + 0; if (s ~ /ms$/) return s * 1000; if (s ~ /m$/) return s * 6e7; return s * 1e6 }
			/^    Latency / { mean = us($2) } /^ +99%/ { p99 = us($2) } /^Requests\/sec:/ { rps = $2 }
			END { printf "%.1f %.1f %.2f\n", mean, p99, rps }'
}

printf '%-3s %-10s %5s %10s %10s %10s %10s %7s\n' t tool round 'mean_us' 'p99_us' 'req/s' 'bound_us' 'ratio'
declare -A col
for round in $(seq "$ROUNDS"); do
	for t in $THREADS; do
		bench_order "$round"
		for tool in "${order[@]}"; do
			read -r mean p99 rps < <(measure "$tool" "$t")
			read -r bound ratio < <(awk -v m="$mean" -v r="$rps" -v c="$CONNS" 'BEGIN { b = r > 0 ? c / r * 1e6 : 0; printf "%.1f %.2f\n", b, (b > 0 ? m / b : 0) }')
			printf '%-3s %-10s %5d %10.1f %10.1f %10.0f %10.1f %6.2fx\n' "$t" "$tool" "$round" "$mean" "$p99" "$rps" "$bound" "$ratio"
			col[$t/$tool/mean]+="$mean "
			col[$t/$tool/p99]+="$p99 "
			col[$t/$tool/rps]+="$rps "
			col[$t/$tool/ratio]+="$ratio "
		done
	done
done
echo "load after: $(cat /proc/loadavg)"

echo
echo "medians over $ROUNDS rounds of ${DURATION}s, $CONNS connections (ratio: mean over Little's bound, connections / req/s)"
printf '%-3s %-10s %10s %10s %10s %7s\n' t tool 'mean_us' 'p99_us' 'req/s' 'ratio'
for t in $THREADS; do
	for tool in $tools; do
		printf '%-3s %-10s %10.1f %10.1f %10.0f %6.2fx\n' "$t" "$tool" \
			"$(bench_median <<<"${col[$t/$tool/mean]}")" "$(bench_median <<<"${col[$t/$tool/p99]}")" \
			"$(bench_median <<<"${col[$t/$tool/rps]}")" "$(bench_median <<<"${col[$t/$tool/ratio]}")"
	done
done
