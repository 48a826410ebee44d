#!/usr/bin/env bash
# bench/capacity.sh: how long edgebench capacity takes on nginx of a known
# capacity, and how close it lands.
#
# It starts its own nginx on 127.0.0.1 (1 worker, access_log off) pinned to
# CPU 0, whose limit_req lets LIMIT requests/s through (a burst of BURST
# absorbs the generator's jitter; the others get a 503 at once), and runs
# the search RUNS times pinned to CPU 1 with the SLO errors<1%. For each
# run it prints the capacity found, its error against LIMIT, the trials
# and the wall time; then the mean, worst error and mean time.
#
#   bench/capacity.sh                       # 500 r/s, 5 runs
#   LIMIT=2000 RUNS=3 bench/capacity.sh
#
# Needs nginx, taskset, jq; builds edgebench.
set -euo pipefail

LIMIT=${LIMIT:-500}
BURST=${BURST:-50}
RUNS=${RUNS:-5}
PORT=${PORT:-18562}
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
FLAGS=${FLAGS:-"--start 100 --warmup 1s --trial 3s --final 6s -c 16"}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
chmod 755 "$work"
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

for tool in nginx taskset jq; do
	command -v "$tool" >/dev/null || { echo "bench/capacity.sh: $tool is missing" >&2; exit 1; }
done

(cd "$root" && go build -trimpath -o "$work/edgebench" ./cmd/edgebench)

mkdir -p "$work/html" "$work/tmp"
echo hello >"$work/html/index.html"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	limit_req_zone \$binary_remote_addr zone=cap:1m rate=${LIMIT}r/s;
	limit_req_status 503;
	server { listen 127.0.0.1:$PORT; root $work/html; limit_req zone=cap burst=$BURST nodelay; }
}
CONF
taskset -c "$SERVER_CPU" nginx -c "$work/nginx.conf" -e "$work/error.log"
for _ in $(seq 50); do
	[ -s "$work/nginx.pid" ] && break
	sleep 0.1
done

echo "nginx limit_req ${LIMIT} r/s (burst $BURST), SLO errors<1%, $FLAGS"
printf '%4s %10s %8s %7s %8s\n' run capacity error trials seconds
sum=0 worst=0 secs=0
for i in $(seq "$RUNS"); do
	start=$(date +%s.%N)
	# shellcheck disable=SC2086
	out=$(taskset -c "$GEN_CPU" "$work/edgebench" capacity --slo 'errors<1%' $FLAGS --format json "http://127.0.0.1:$PORT/")
	end=$(date +%s.%N)
	cap=$(jq .capacity_rps <<<"$out")
	n=$(jq '.trials | length' <<<"$out")
	err=$(jq -n "($cap - $LIMIT) / $LIMIT * 100")
	t=$(jq -n "$end - $start")
	printf '%4d %10.0f %7.1f%% %7d %8.1f\n' "$i" "$cap" "$err" "$n" "$t"
	sum=$(jq -n "$sum + $cap")
	secs=$(jq -n "$secs + $t")
	worst=$(jq -n "[$worst, ($err | fabs)] | max")
done
printf 'mean %.0f req/s, worst error %.1f %%, mean %.0f s a search\n' "$(jq -n "$sum / $RUNS")" "$worst" "$(jq -n "$secs / $RUNS")"
