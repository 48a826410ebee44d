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
chmod 755 "$work" # nginx's worker reads the document as another user
hog=
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) $hog 2>/dev/null || true; rm -rf "$work"' EXIT

for tool in nginx ab taskset nstat curl; do
	command -v "$tool" >/dev/null || { echo "bench/connects.sh: $tool is missing (apt-get install nginx-light apache2-utils iproute2 curl)" >&2; exit 1; }
done
ulimit -n 20000
if [[ -z $EDGEBENCH ]]; then
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$work/edgebench" ./cmd/edgebench)
	EDGEBENCH=$work/edgebench
fi

mkdir -p "$work/html" "$work/tmp"
head -c 612 /dev/zero | tr '\0' 'x' >"$work/html/index.html"
chmod 644 "$work/html/index.html"
cat >"$work/nginx.conf" <<EOF
worker_processes 1;
worker_rlimit_nofile 20000;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 12000; }
http {
	access_log off;
	keepalive_requests 100000000;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server { listen 127.0.0.1:$PORT backlog=$BACKLOG; root $work/html; }
}
EOF
taskset -c "$SERVER_CPU" nginx -c "$work/nginx.conf"
for _ in $(seq 50); do
	curl -fs "http://127.0.0.1:$PORT/index.html" >/dev/null 2>&1 && break
	sleep 0.1
done
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
	case $1 in
	ab) cmd=(ab) ;;
	edgebench) cmd=("$EDGEBENCH" ab --no-system) ;;
	old) cmd=("$OLD" ab --no-system) ;;
	esac
	nstat -n >/dev/null
	taskset -c "$GEN_CPU" "${cmd[@]}" -q -c "$CONNS" -n "$REQUESTS" -k "$url" >"$work/out" 2>/dev/null || true
	read -r over syn < <(nstat | awk '/TcpExtListenOverflows/ {o = $2} /TcpExtTCPSynRetrans/ {s = $2} END {print o + 0, s + 0}')
	awk -v o="$over" -v s="$syn" '/^Requests per second:/ {r = $4} /^Connect:/ {m = $3; x = $6} END {print r + 0, m + 0, x + 0, o, s}' "$work/out"
}

printf '%-10s %5s %10s %10s %10s %10s %10s\n' tool round 'req/s' 'conn_ms' 'conn_max' overflows syn_again
declare -A col
for round in $(seq "$ROUNDS"); do
	order=($tools)
	((round % 2 == 0)) && order=($(printf '%s\n' "${order[@]}" | tac))
	for tool in "${order[@]}"; do
		read -r rps cm cx over syn < <(measure "$tool")
		printf '%-10s %5d %10.0f %10d %10d %10d %10d\n' "$tool" "$round" "$rps" "$cm" "$cx" "$over" "$syn"
		for f in rps cm cx over syn; do
			col[$tool/$f]+="${!f} "
		done
	done
done
echo "load after: $(cat /proc/loadavg)"

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "medians over $ROUNDS rounds: -c$CONNS -n$REQUESTS -k, backlog $BACKLOG, hog $HOG"
printf '%-10s %10s %10s %10s %10s %10s\n' tool 'req/s' 'conn_ms' 'conn_max' overflows syn_again
for tool in $tools; do
	printf '%-10s %10.0f %10.1f %10.1f %10.1f %10.1f\n' "$tool" "$(median <<<"${col[$tool/rps]}")" "$(median <<<"${col[$tool/cm]}")" \
		"$(median <<<"${col[$tool/cx]}")" "$(median <<<"${col[$tool/over]}")" "$(median <<<"${col[$tool/syn]}")"
done
