#!/usr/bin/env bash
# bench/loadgen.sh: edgebench's load generator against wrk and ab, on the
# same nginx, in the same run.
#
# It starts its own nginx on 127.0.0.1 (1 worker, access_log off) pinned to
# CPU 0, serving the seeds' documents (a 2159-byte index.html and a 13-byte
# file), and runs each load generator pinned to CPU 1 with the same
# connections and duration. For each it prints requests/s, the generator's
# own CPU seconds (user+sys), requests per generator CPU-second, p50 and p99,
# and the ratios edgebench/wrk and edgebench/ab.
#
#   bench/loadgen.sh                 # 50 connections, 5 s, both documents
#   CONNS=100 DURATION=10 RUNS=3 bench/loadgen.sh
#
# Needs nginx, wrk, ab (apache2-utils), taskset, jq; builds edgebench.
set -euo pipefail

CONNS=${CONNS:-50}
DURATION=${DURATION:-5}
RUNS=${RUNS:-2}
PORT=${PORT:-18481}
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
DOCS=${DOCS:-"index.html small.txt"}
MODES=${MODES:-"keepalive close"}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
chmod 755 "$work" # nginx's worker reads the documents as another user
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

for tool in nginx wrk ab taskset jq; do
	command -v "$tool" >/dev/null || { echo "bench/loadgen.sh: $tool is missing (apt-get install nginx-light wrk apache2-utils jq)" >&2; exit 1; }
done

(cd "$root" && go build -trimpath -o "$work/edgebench" ./cmd/edgebench)

mkdir -p "$work/html"
# The seeds' documents: a 2159-byte index page and a 13-byte body.
head -c 2159 /dev/zero | tr '\0' 'x' >"$work/html/index.html"
printf 'hello, world\n' >"$work/html/small.txt"

cat >"$work/nginx.conf" <<EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 1000000;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server {
		listen 127.0.0.1:$PORT;
		root $work/html;
	}
}
EOF
mkdir -p "$work/tmp"
taskset -c "$SERVER_CPU" nginx -c "$work/nginx.conf"
for _ in $(seq 50); do
	curl -fs "http://127.0.0.1:$PORT/small.txt" >/dev/null 2>&1 && break
	sleep 0.1
done

# cpu_of CMD...: runs CMD pinned to GEN_CPU, output to $work/out, and
# prints the CPU seconds (user+sys) it used.
cpu_of() {
	/usr/bin/time -f '%U %S' -o "$work/time" taskset -c "$GEN_CPU" "$@" >"$work/out" 2>"$work/err" || true
	# GNU time puts "Command exited with non-zero status" first when it did.
	tail -n 1 "$work/time" | awk '{printf "%.3f", $1 + $2}'
}

# Each runner prints: rps cpu_s p50_us p99_us
run_edgebench() { # url keepalive
	local ka=()
	[ "$2" = close ] && ka=(--no-keepalive)
	local cpu
	cpu=$(cpu_of "$work/edgebench" run -q -t 1 -c "$CONNS" -d "$DURATION" "${ka[@]}" --format json "$1")
	jq -r --arg cpu "$cpu" '"\(.rps) \($cpu) \(.latency_us.p50) \(.latency_us.p99) \(.errors.connect+.errors.read+.errors.write+.errors.timeout+.errors.status+.errors.length)"' "$work/out"
}

# wrk prints latency as 1.23ms, 456.78us, 1.2s: to microseconds.
to_us() {
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) { sub(/us$/, "", v); print v + 0 }
		else if (v ~ /ms$/) { sub(/ms$/, "", v); print v * 1000 }
		else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000000 }
		else print v }'
}

run_wrk() {
	local hdr=()
	[ "$2" = close ] && hdr=(-H "Connection: close")
	local cpu
	cpu=$(cpu_of wrk -t1 -c "$CONNS" -d "${DURATION}s" --latency "${hdr[@]}" "$1")
	local rps p50 p99 errs
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/out")
	p50=$(to_us "$(awk '$1 == "50%" {print $2; exit}' "$work/out")")
	p99=$(to_us "$(awk '$1 == "99%" {print $2; exit}' "$work/out")")
	errs=$(awk '/Socket errors/ {gsub(",", ""); print $4+$6+$8+$10} /Non-2xx/ {print $NF}' "$work/out" | awk '{s+=$1} END {print s+0}')
	echo "$rps $cpu $p50 $p99 $errs"
}

run_ab() {
	local k=()
	[ "$2" = keepalive ] && k=(-k)
	local cpu
	# -t alone stops at 50,000 requests: give -n too.
	cpu=$(cpu_of ab -q -c "$CONNS" -t "$DURATION" -n 100000000 "${k[@]}" "$1")
	local rps p50 p99 errs
	rps=$(awk '/^Requests per second:/ {print $4}' "$work/out")
	p50=$(awk '$1 == "50%" {print $2 * 1000}' "$work/out")
	p99=$(awk '$1 == "99%" {print $2 * 1000}' "$work/out")
	errs=$(awk '/^Failed requests:/ {print $3}' "$work/out")
	echo "$rps $cpu $p50 $p99 ${errs:-0}"
}

printf '%-10s %-9s %-9s %3s %12s %8s %12s %9s %9s %6s\n' doc mode tool run 'req/s' 'cpu_s' 'req/cpu-s' 'p50_us' 'p99_us' errors
declare -A sum_rps sum_eff sum_p50 sum_p99
for doc in $DOCS; do
	url="http://127.0.0.1:$PORT/$doc"
	for mode in $MODES; do
		for run in $(seq "$RUNS"); do
			for tool in edgebench wrk ab; do
				read -r rps cpu p50 p99 errs < <("run_$tool" "$url" "$mode")
				eff=$(awk -v r="$rps" -v c="$cpu" -v d="$DURATION" 'BEGIN { if (c > 0) printf "%.0f", r * d / c; else print 0 }')
				printf '%-10s %-9s %-9s %3s %12.0f %8.2f %12s %9.0f %9.0f %6s\n' "$doc" "$mode" "$tool" "$run" "$rps" "$cpu" "$eff" "$p50" "$p99" "$errs"
				key="$doc/$mode/$tool"
				sum_rps[$key]=$(awk -v a="${sum_rps[$key]:-0}" -v b="$rps" 'BEGIN {print a + b}')
				sum_eff[$key]=$(awk -v a="${sum_eff[$key]:-0}" -v b="$eff" 'BEGIN {print a + b}')
				sum_p50[$key]=$(awk -v a="${sum_p50[$key]:-0}" -v b="$p50" 'BEGIN {print a + b}')
				sum_p99[$key]=$(awk -v a="${sum_p99[$key]:-0}" -v b="$p99" 'BEGIN {print a + b}')
			done
		done
	done
done

echo
echo "ratios (mean over runs; req/cpu-s counts the generator's own CPU seconds)"
printf '%-10s %-9s %-14s %10s %12s %8s %8s\n' doc mode ratio 'req/s' 'req/cpu-s' p50 p99
for doc in $DOCS; do
	for mode in $MODES; do
		for peer in wrk ab; do
			e="$doc/$mode/edgebench"
			p="$doc/$mode/$peer"
			awk -v d="$doc" -v m="$mode" -v peer="$peer" \
				-v er="${sum_rps[$e]}" -v pr="${sum_rps[$p]}" -v ee="${sum_eff[$e]}" -v pe="${sum_eff[$p]}" \
				-v e50="${sum_p50[$e]}" -v p50="${sum_p50[$p]}" -v e99="${sum_p99[$e]}" -v p99="${sum_p99[$p]}" \
				'function r(a, b) { return b > 0 ? a / b : 0 }
				BEGIN { printf "%-10s %-9s %-14s %9.2fx %11.2fx %7.2fx %7.2fx\n", d, m, "edgebench/" peer, r(er, pr), r(ee, pe), r(e50, p50), r(e99, p99) }'
		done
	done
done
echo "(ab prints whole milliseconds: its p50/p99 ratios are coarse. Without keep-alive"
echo " edgebench and ab count the connect in the latency, wrk does not.)"
