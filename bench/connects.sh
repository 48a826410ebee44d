#!/usr/bin/env bash
# bench/connects.sh: the gcc seed's `ab -c5000 -n50000 -k` on a box made
# busy on purpose, ab against edgebench ab, with the server's listen
# backlog and the kernel's counters as witnesses.
#
# It starts its own nginx on 127.0.0.1 (1 worker, access_log off, a
# 612-byte index.html, `listen ... backlog=BACKLOG`, 511 by default as
# nginx's) pinned to SERVER_CPU, with a CPU hog (a shell loop) pinned to
# the same CPU unless HOG=0, and runs, pinned to GEN_CPU, `ab -c C -n N -k`
# and `edgebench ab` with the same flags (and, with OLD=path, another
# edgebench build), in alternating order from one round to the next. For
# each run it prints req/s, the mean and slowest connect of ab's
# "Connect:" row (ms), and what the kernel counted meanwhile (nstat,
# machine-wide): listen overflows (a SYN or a handshake's last ACK
# dropped because the backlog was full) and SYNs sent again. Then the
# medians per tool.
#
#   bench/connects.sh                         # 5 rounds, -c5000 -n50000, backlog 511, a hog
#   BACKLOG=128 ROUNDS=7 OLD=/tmp/main/edgebench bench/connects.sh
#   HOG=0 bench/connects.sh                   # a quiet box
#
# Needs nginx, ab (apache2-utils), taskset, nstat (iproute2), curl; builds
# edgebench (or EDGEBENCH=path). It raises its open-file limit to 20000.
set -euo pipefail

CONNS=${CONNS:-5000}
REQUESTS=${REQUESTS:-50000}
ROUNDS=${ROUNDS:-5}
BACKLOG=${BACKLOG:-511}
HOG=${HOG:-1}
PORT=${PORT:-18492}
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
EDGEBENCH=${EDGEBENCH:-}
OLD=${OLD:-}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
hog=
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) $hog 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/bench/lib.sh"

bench_need connects.sh "apt-get install nginx-light apache2-utils iproute2 curl" nginx ab taskset nstat curl
ulimit -n 20000
bench_edgebench
bench_nginx "$PORT" 12000 " backlog=$BACKLOG" "worker_rlimit_nofile 20000;"
if [[ $HOG == 1 ]]; then
	taskset -c "$SERVER_CPU" sh -c 'while :; do :; done' &
	hog=$!
fi
url="http://127.0.0.1:$PORT/index.html"
echo "load before: $(cat /proc/loadavg); somaxconn $(cat /proc/sys/net/core/somaxconn), backlog $BACKLOG, hog ${HOG}"

tools="ab edgebench${OLD:+ old}"
# measure TOOL: one run; prints rps connect_mean_ms connect_max_ms overflows syn_retrans
measure() {
	local cmd
	bench_cmd "$1" ab
	nstat -n >/dev/null
	taskset -c "$GEN_CPU" "${cmd[@]}" -q -c "$CONNS" -n "$REQUESTS" -k "$url" >"$work/out" 2>/dev/null || true
	read -r over syn < <(nstat | awk '/TcpExtListenOverflows/ {o = $2} /TcpExtTCPSynRetrans/ {s = $2} END {print o + 0, s + 0}')
	awk -v o="$over" -v s="$syn" '/^Requests per second:/ {r = $4} /^Connect:/ {m = $3; x = $6} END {print r + 0, m + 0, x + 0, o, s}' "$work/out"
}

printf '%-10s %5s %10s %10s %10s %10s %10s\n' tool round 'req/s' 'conn_ms' 'conn_max' overflows syn_again
declare -A col
for round in $(seq "$ROUNDS"); do
	bench_order "$round"
	for tool in "${order[@]}"; do
		read -r rps cm cx over syn < <(measure "$tool")
		printf '%-10s %5d %10.0f %10d %10d %10d %10d\n' "$tool" "$round" "$rps" "$cm" "$cx" "$over" "$syn"
		for f in rps cm cx over syn; do
			col[$tool/$f]+="${!f} "
		done
	done
done
echo "load after: $(cat /proc/loadavg)"

echo
echo "medians over $ROUNDS rounds: -c$CONNS -n$REQUESTS -k, backlog $BACKLOG, hog $HOG"
printf '%-10s %10s %10s %10s %10s %10s\n' tool 'req/s' 'conn_ms' 'conn_max' overflows syn_again
for tool in $tools; do
	printf '%-10s %10.0f %10.1f %10.1f %10.1f %10.1f\n' "$tool" "$(bench_median <<<"${col[$tool/rps]}")" "$(bench_median <<<"${col[$tool/cm]}")" \
		"$(bench_median <<<"${col[$tool/cx]}")" "$(bench_median <<<"${col[$tool/over]}")" "$(bench_median <<<"${col[$tool/syn]}")"
done
