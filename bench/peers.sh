#!/usr/bin/env bash
# bench/peers.sh: the server capacity edgebench reports, and what it costs,
# against the tool it replaces, in alternating paired runs on one nginx.
#
# Pairs over HTTP (the default PAIRS): `edgebench run` (keep-alive) against
# `wrk -t1`, `edgebench run --no-keepalive` against `ab` without -k, and
# the drop-ins with the tools' own flags: `edgebench wrk` against wrk
# (wrk-mode) and `edgebench ab` against ab (ab-mode).
#
# Pairs over HTTPS and HTTP/2 (PAIRS=tls for all of them):
#   https-keepalive     edgebench run https://        wrk -t1 https://
#   https-close         edgebench run --no-keepalive --no-tls-resume
#                                                     ab https:// (ab never resumes)
#   https-close-resume  edgebench run --no-keepalive  ab https:// (edgebench's
#                       default: a new connection resumes a TLS session)
#   https-wrk-mode      edgebench wrk https://        wrk https://
#   https-ab-mode       edgebench ab https://         ab https://
#   h2                  edgebench run --h2 -c H2_CONNS --streams H2_STREAMS
#                                                     h2load -t1 -c H2_CONNS -m H2_STREAMS
#   h2c                 the same in cleartext (--h2c; h2load's http:// is h2c)
# nginx serves TLS 1.2 and 1.3 with an ECDSA P-256 certificate made for the
# run (openssl), TLS 1.3's cipher pinned to TLS_AES_128_GCM_SHA256 (Go's
# first choice with AES instructions; OpenSSL clients would take
# AES_256_GCM), http2 on. edgebench verifies the certificate (--cacert);
# wrk, ab and h2load never do.
#
# Each round runs both tools of a pair back to back, the order alternating
# from one round to the next, each pinned to GEN_CPU while nginx's single
# worker is pinned to SERVER_CPU. For every run it prints:
#   req/s       the tool's own figure (wrk's Requests/sec, ab's Requests per
#               second, h2load's req/s, edgebench's rps)
#   served      requests nginx served during the run (stub_status)
#   gen_cpu     the tool's user+sys CPU seconds (the whole process)
#   req/cpu-s   served / gen_cpu
#   ngx_us/req  the nginx worker's user+sys CPU (/proc/PID/stat) per request
#   ngx_busy    the worker's CPU seconds over the run's wall time
# then the medians per tool and the ratios edgebench/peer.
#
#   bench/peers.sh                              # 6 rounds of 3 s, 50 connections
#   ROUNDS=10 DURATION=5 bench/peers.sh
#   PAIRS=tls bench/peers.sh                    # the HTTPS and HTTP/2 pairs
#   PAIRS="https-close h2" ROUNDS=12 bench/peers.sh
#   PAIRS=keepalive EB_ARGS=--no-probe bench/peers.sh
#   EDGEBENCH=/tmp/old/edgebench bench/peers.sh # another build
#
# PAIRS also takes close-wrk (edgebench --no-keepalive against wrk with
# -H 'Connection: close') and close-ab-cc (against ab -H 'Connection: close').
# ab sends an HTTP/1.0 request line and no Connection header; edgebench
# sends HTTP/1.1 with "Connection: close"; nginx closes after the response
# either way.
#
# TRACE=1 counts, per request served, what nginx's worker and the tool do
# (perf stat on tracepoints: system calls, epoll_wait calls, packets sent,
# context switches; perf from linux-perf) and prints their medians after
# the figures: the witness that both tools drive the server the same way.
# perf slows both processes: take req/s and CPU figures from runs without it.
#
# Take figures only on a quiet machine: the script prints /proc/loadavg
# before and after, and WAIT_QUIET=0.5 makes it wait (up to 30 min) until
# the 1-minute load is below that. On a machine others share, RT=1 runs
# nginx's worker and each tool at SCHED_FIFO priority 1 (chrt), so that
# other processes do not take their CPUs; the figures are then not those of
# a quiet machine (a sleeping tool's CPU runs other tasks instead of idling).
#
# Needs nginx (with stub_status, ssl and http2, as Debian's nginx-light),
# wrk, ab (apache2-utils), taskset, curl, jq, and for the TLS pairs openssl
# and h2load (nghttp2-client), and go (unless EDGEBENCH is given).
set -euo pipefail

CONNS=${CONNS:-50}
DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-6}
PORT=${PORT:-18482}
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
PAIRS=${PAIRS:-"keepalive close wrk-mode ab-mode"}
[[ $PAIRS == tls ]] && PAIRS="https-keepalive https-close https-close-resume https-wrk-mode https-ab-mode h2 h2c"
H2_CONNS=${H2_CONNS:-4}
H2_STREAMS=${H2_STREAMS:-10}
TLS_PORT=${TLS_PORT:-18483}
H2C_PORT=${H2C_PORT:-18484}
EB_ARGS=${EB_ARGS:-}
EDGEBENCH=${EDGEBENCH:-}
WAIT_QUIET=${WAIT_QUIET:-}
RT=${RT:-}
TRACE=${TRACE:-}
trace_events=raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,net:net_dev_xmit,sched:sched_switch

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
chmod 755 "$work" # nginx's worker reads the document as another user
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

tls=
[[ " $PAIRS" =~ \ (https-|h2) ]] && tls=1
for tool in nginx wrk ab taskset curl jq ${tls:+openssl h2load} ${TRACE:+perf}; do
	command -v "$tool" >/dev/null || { echo "bench/peers.sh: $tool is missing (apt-get install nginx-light wrk apache2-utils curl jq openssl nghttp2-client${TRACE:+ linux-perf})" >&2; exit 1; }
done
[[ -x /usr/bin/time ]] || { echo "bench/peers.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

if [[ -z $EDGEBENCH ]]; then
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$work/edgebench" ./cmd/edgebench)
	EDGEBENCH=$work/edgebench
fi

mkdir -p "$work/html" "$work/tmp"
tls_servers=
if [[ -n $tls ]]; then
	# A throwaway CA and, signed by it, an ECDSA P-256 certificate for
	# 127.0.0.1 and localhost.
	(
		cd "$work"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=peers-ca \
			-keyout ca.key -out ca.pem 2>/dev/null
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
			-keyout server.key -out server.csr 2>/dev/null
		printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext.cnf
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile ext.cnf \
			-out server.pem 2>/dev/null
		chmod 644 server.key server.pem
	)
	tls_servers="
	ssl_certificate $work/server.pem;
	ssl_certificate_key $work/server.key;
	ssl_protocols TLSv1.2 TLSv1.3;
	ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;
	server { listen 127.0.0.1:$TLS_PORT ssl http2; root $work/html; }
	server { listen 127.0.0.1:$H2C_PORT http2; root $work/html; }"
fi
# The seeds' document: a 2159-byte index page.
head -c 2159 /dev/zero | tr '\0' 'x' >"$work/html/index.html"
chmod 644 "$work/html/index.html"
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
		location = /status { stub_status; }
	}$tls_servers
}
EOF
taskset -c "$SERVER_CPU" nginx -c "$work/nginx.conf"
for _ in $(seq 50); do
	curl -fs "http://127.0.0.1:$PORT/index.html" >/dev/null 2>&1 && break
	sleep 0.1
done
worker=$(pgrep -P "$(cat "$work/nginx.pid")")
rt=()
if [[ -n $RT ]]; then
	chrt -f -p 1 "$worker"
	rt=(chrt -f 1)
fi
[[ $(curl -s -o /dev/null -w '%{http_code} %{size_download}' "http://127.0.0.1:$PORT/index.html") == "200 2159" ]] ||
	{ echo "bench/peers.sh: nginx does not serve the 2159-byte document" >&2; exit 1; }

url="http://127.0.0.1:$PORT/index.html"
surl="https://127.0.0.1:$TLS_PORT/index.html"
if [[ -n $tls ]]; then
	[[ $(curl -s --cacert "$work/ca.pem" --http2 -o /dev/null -w '%{http_version} %{size_download}' "$surl") == "2 2159" ]] ||
		{ echo "bench/peers.sh: nginx does not serve the document over HTTPS and HTTP/2" >&2; exit 1; }
fi

if [[ -n $WAIT_QUIET ]]; then
	for _ in $(seq 180); do
		awk -v max="$WAIT_QUIET" '{exit !($1 < max)}' /proc/loadavg && break
		sleep 10
	done
fi
echo "load before: $(cat /proc/loadavg)"

served() { curl -s "http://127.0.0.1:$PORT/status" | awk 'NR == 3 {print $3}'; }
ngx_ticks() { awk '{print $14 + $15}' "/proc/$worker/stat"; }

# measure TOOL MODE: runs one tool pinned to GEN_CPU and prints
# rps served gen_cpu ngx_cpu wall
measure() {
	local tool=$1 mode=$2 cmd rps
	local eb=("$EDGEBENCH" run -q -t 1 -c "$CONNS" -d "$DURATION" --format json)
	local ca=(--cacert "$work/ca.pem")
	case $tool/$mode in
	edgebench/keepalive) cmd=("${eb[@]}" $EB_ARGS "$url") ;;
	edgebench/wrk-mode) cmd=("$EDGEBENCH" wrk -t1 -c "$CONNS" -d "${DURATION}s" $EB_ARGS "$url") ;;
	edgebench/ab-mode) cmd=("$EDGEBENCH" ab -q -c "$CONNS" -t "$DURATION" -n 100000000 $EB_ARGS "$url") ;;
	edgebench/https-keepalive) cmd=("${eb[@]}" "${ca[@]}" $EB_ARGS "$surl") ;;
	edgebench/https-close) cmd=("${eb[@]}" "${ca[@]}" --no-keepalive --no-tls-resume $EB_ARGS "$surl") ;;
	edgebench/https-close-resume) cmd=("${eb[@]}" "${ca[@]}" --no-keepalive $EB_ARGS "$surl") ;;
	edgebench/https-wrk-mode) cmd=("$EDGEBENCH" wrk -t1 -c "$CONNS" -d "${DURATION}s" $EB_ARGS "$surl") ;;
	edgebench/https-ab-mode) cmd=("$EDGEBENCH" ab -q -c "$CONNS" -t "$DURATION" -n 100000000 $EB_ARGS "$surl") ;;
	edgebench/h2) cmd=("$EDGEBENCH" run -q -t 1 -c "$H2_CONNS" --streams "$H2_STREAMS" -d "$DURATION" --format json --h2 "${ca[@]}" $EB_ARGS "$surl") ;;
	edgebench/h2c) cmd=("$EDGEBENCH" run -q -t 1 -c "$H2_CONNS" --streams "$H2_STREAMS" -d "$DURATION" --format json --h2c $EB_ARGS "http://127.0.0.1:$H2C_PORT/index.html") ;;
	edgebench/*) cmd=("${eb[@]}" --no-keepalive $EB_ARGS "$url") ;;
	wrk/keepalive | wrk/wrk-mode) cmd=(wrk -t1 -c "$CONNS" -d "${DURATION}s" "$url") ;;
	wrk/https-keepalive | wrk/https-wrk-mode) cmd=(wrk -t1 -c "$CONNS" -d "${DURATION}s" "$surl") ;;
	wrk/*) cmd=(wrk -t1 -c "$CONNS" -d "${DURATION}s" -H 'Connection: close' "$url") ;;
	# -t alone stops at 50,000 requests: give -n too.
	ab/close | ab/ab-mode) cmd=(ab -q -c "$CONNS" -t "$DURATION" -n 100000000 "$url") ;;
	ab/https-*) cmd=(ab -q -c "$CONNS" -t "$DURATION" -n 100000000 "$surl") ;;
	ab/*) cmd=(ab -q -c "$CONNS" -t "$DURATION" -n 100000000 -H 'Connection: close' "$url") ;;
	h2load/h2) cmd=(h2load -t1 -c "$H2_CONNS" -m "$H2_STREAMS" -D "$DURATION" "$surl") ;;
	h2load/h2c) cmd=(h2load -t1 -c "$H2_CONNS" -m "$H2_STREAMS" -D "$DURATION" "http://127.0.0.1:$H2C_PORT/index.html") ;;
	esac
	local s0 t0 s1 t1 perf=() pp=
	s0=$(served)
	t0=$(ngx_ticks)
	if [[ -n $TRACE ]]; then
		perf stat -x, -e "$trace_events" -p "$worker" -o "$work/ngx.csv" &
		pp=$!
		perf=(perf stat -x, -e "$trace_events" -o "$work/tool.csv" --)
	fi
	/usr/bin/time -f '%e %U %S' -o "$work/time" "${rt[@]}" "${perf[@]}" taskset -c "$GEN_CPU" "${cmd[@]}" >"$work/out" 2>"$work/err" || true
	if [[ -n $pp ]]; then
		kill -INT "$pp"
		wait "$pp" || true
	fi
	t1=$(ngx_ticks)
	s1=$(served)
	if [[ -n $TRACE ]]; then
		# Per request served: nginx's counts, then the tool's, in the
		# order of trace_events.
		paste -d, <(grep -v '^#' "$work/ngx.csv" | grep . | cut -d, -f1) <(grep -v '^#' "$work/tool.csv" | grep . | cut -d, -f1) |
			awk -F, -v n=$((s1 - s0 - 1)) '{ printf "%.3f %.3f ", $1 / n, $2 / n } END { print "" }' >"$work/trace"
	fi
	case $tool in
	edgebench)
		case $mode in
		*wrk-mode) rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/out") ;;
		*ab-mode) rps=$(awk '/^Requests per second:/ {print $4}' "$work/out") ;;
		*) rps=$(jq -r .rps "$work/out") ;;
		esac ;;
	wrk) rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/out") ;;
	ab) rps=$(awk '/^Requests per second:/ {print $4}' "$work/out") ;;
	h2load) rps=$(awk '/^finished in/ {print $4}' "$work/out") ;;
	esac
	# GNU time puts "Command exited with non-zero status" first when it did.
	tail -n 1 "$work/time" | awk -v rps="${rps:-0}" -v s=$((s1 - s0 - 1)) -v ngx=$((t1 - t0)) \
		'{ printf "%s %d %.3f %.2f %.3f\n", rps, s, $2 + $3, ngx / 100, $1 }'
}

pair_of() {
	case $1 in
	keepalive) echo "keepalive wrk" ;;
	close) echo "close ab" ;;
	close-wrk) echo "close-wrk wrk" ;;
	close-ab-cc) echo "close-ab-cc ab" ;;
	wrk-mode) echo "wrk-mode wrk" ;;
	ab-mode) echo "ab-mode ab" ;;
	https-keepalive | https-wrk-mode) echo "$1 wrk" ;;
	https-close | https-close-resume | https-ab-mode) echo "$1 ab" ;;
	h2 | h2c) echo "$1 h2load" ;;
	*) echo "bench/peers.sh: unknown pair $1 (keepalive, close, wrk-mode, ab-mode, close-wrk, close-ab-cc, https-keepalive, https-close, https-close-resume, https-wrk-mode, https-ab-mode, h2, h2c, or tls for all of those over TLS)" >&2; exit 2 ;;
	esac
}

printf '%-18s %-9s %5s %10s %9s %8s %10s %10s %8s\n' pair tool round 'req/s' served gen_cpu 'req/cpu-s' 'ngx_us/req' ngx_busy
declare -A col last
for round in $(seq "$ROUNDS"); do
	for pair in $PAIRS; do
		read -r mode peer < <(pair_of "$pair")
		order=(edgebench "$peer")
		((round % 2 == 0)) && order=("$peer" edgebench)
		for tool in "${order[@]}"; do
			read -r rps n cpu ngx wall < <(measure "$tool" "$mode")
			line=$(awk -v rps="$rps" -v n="$n" -v cpu="$cpu" -v ngx="$ngx" -v wall="$wall" 'BEGIN {
				printf "%.0f %.0f %.3f %.0f %.2f %.2f", rps, n, cpu, (cpu > 0 ? n / cpu : 0), (n > 0 ? ngx * 1e6 / n : 0), (wall > 0 ? ngx / wall : 0) }')
			read -r rps n cpu eff nus busy <<<"$line"
			printf '%-18s %-9s %5d %10d %9d %8.2f %10d %10.2f %8.2f\n' "$pair" "$tool" "$round" "$rps" "$n" "$cpu" "$eff" "$nus" "$busy"
			key=$pair/$tool
			col[$key/rps]+="$rps "
			col[$key/eff]+="$eff "
			col[$key/nus]+="$nus "
			col[$key/busy]+="$busy "
			last[$tool/rps]=$rps
			last[$tool/eff]=$eff
			if [[ -n $TRACE ]]; then
				read -r -a tr <"$work/trace"
				for i in "${!tr[@]}"; do
					col[$key/trace/$i]+="${tr[$i]} "
				done
			fi
		done
		# The round's own ratios: the two runs of a pair are minutes
		# apart at most, so drifts of the host cancel out in them.
		for f in rps eff; do
			col[$pair/ratio/$f]+="$(awk -v a="${last[edgebench/$f]}" -v b="${last[$peer/$f]}" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }') "
		done
	done
done
echo "load after: $(cat /proc/loadavg)"

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# median_ci prints the median of its numbers and the 95 % confidence
# interval of that median from order statistics (as benchstat): the j-th
# smallest and largest, j the largest rank with P(Binomial(n, 1/2) < j) <=
# 2.5 %, two decimals. Under 6 numbers no such interval exists: it prints
# - -.
median_ci() {
	tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {
		n = NR; med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		p = 0.5 ^ n; cum = 0; j = 0
		for (k = 0; k < n; k++) { cum += p; if (cum > 0.025) break; j = k + 1; p = p * (n - k) / (k + 1) }
		if (j < 1) printf "%.2f - -\n", med; else printf "%.2f %.2f %.2f\n", med, v[j], v[n + 1 - j] }'
}

echo
echo "medians over $ROUNDS rounds of ${DURATION}s, $CONNS connections"
printf '%-18s %-9s %10s %10s %10s %8s\n' pair tool 'req/s' 'req/cpu-s' 'ngx_us/req' ngx_busy
declare -A med
for pair in $PAIRS; do
	read -r mode peer < <(pair_of "$pair")
	for tool in edgebench "$peer"; do
		for f in rps eff nus busy; do
			med[$pair/$tool/$f]=$(median <<<"${col[$pair/$tool/$f]}")
		done
		printf '%-18s %-9s %10.0f %10.0f %10.2f %8.2f\n' "$pair" "$tool" "${med[$pair/$tool/rps]}" "${med[$pair/$tool/eff]}" "${med[$pair/$tool/nus]}" "${med[$pair/$tool/busy]}"
	done
done
echo
printf '%-18s %-16s %8s %10s %10s\n' pair ratio 'req/s' 'req/cpu-s' 'ngx_us/req'
for pair in $PAIRS; do
	read -r mode peer < <(pair_of "$pair")
	awk -v p="$pair" -v peer="$peer" \
		-v er="${med[$pair/edgebench/rps]}" -v pr="${med[$pair/$peer/rps]}" \
		-v ee="${med[$pair/edgebench/eff]}" -v pe="${med[$pair/$peer/eff]}" \
		-v en="${med[$pair/edgebench/nus]}" -v pn="${med[$pair/$peer/nus]}" \
		'function r(a, b) { return b > 0 ? a / b : 0 }
		BEGIN { printf "%-18s %-16s %7.2fx %9.2fx %9.2fx\n", p, "edgebench/" peer, r(er, pr), r(ee, pe), r(en, pn) }'
done
echo
echo "ratios of each round's pair: median [95 % interval of the median]"
printf '%-18s %-16s %20s %20s\n' pair ratio 'req/s' 'req/cpu-s'
for pair in $PAIRS; do
	read -r mode peer < <(pair_of "$pair")
	read -r rm rl rh < <(median_ci <<<"${col[$pair/ratio/rps]}")
	read -r em el eh < <(median_ci <<<"${col[$pair/ratio/eff]}")
	printf '%-18s %-16s %6sx [%4s, %4s] %6sx [%4s, %4s]\n' "$pair" "edgebench/$peer" "$rm" "$rl" "$rh" "$em" "$el" "$eh"
done
if [[ -n $TRACE ]]; then
	echo
	echo "per request served, medians (perf stat on tracepoints; nginx's worker | the tool)"
	printf '%-18s %-9s %9s %9s %9s %9s | %9s %9s %9s %9s\n' pair tool syscalls epoll_wait packets switches syscalls epoll_wait packets switches
	for pair in $PAIRS; do
		read -r mode peer < <(pair_of "$pair")
		for tool in edgebench "$peer"; do
			v=()
			for side in 0 1; do
				for e in 0 1 2 3; do
					v+=("$(median <<<"${col[$pair/$tool/trace/$((2 * e + side))]}")")
				done
			done
			printf '%-18s %-9s %9.3f %9.3f %9.3f %9.3f | %9.3f %9.3f %9.3f %9.3f\n' "$pair" "$tool" "${v[@]}"
		done
	done
fi
