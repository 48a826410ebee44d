# bench/lib.sh: what the bench scripts share, sourced after they set
# root (the repository) and work (their scratch folder):
#
#   nginx: bench_nginx starts one on 127.0.0.1 serving a 612-byte
#   index.html (connects.sh, latency.sh); bench_edgebench builds the
#   load generator unless EDGEBENCH names one; bench_median.
#
#   collector: bench_collector builds edgebench-collector unless
#   COLLECTOR names one, bench_serve starts it (col) and reads its idle
#   RSS, bench_sample samples its RSS while another process runs
#   (event-flood.sh, quota-flood.sh, page-flood.sh); rss and hwm read
#   /proc.
#
#   PostgreSQL: bench_port, and a private cluster under $work/pg
#   (start_pg, stop_pg, as_pg; history.sh, fleet.sh).

# bench_need SCRIPT HINT TOOL...: exits naming the first TOOL missing,
# with how to install it.
bench_need() {
	local script=$1 hint=$2 tool
	shift 2
	for tool; do
		command -v "$tool" >/dev/null || { echo "bench/$script: $tool is missing ($hint)" >&2; exit 1; }
	done
}

# bench_edgebench: EDGEBENCH, built from root unless set.
bench_edgebench() {
	if [[ -z ${EDGEBENCH:-} ]]; then
		(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$work/edgebench" ./cmd/edgebench)
		EDGEBENCH=$work/edgebench
	fi
}

# bench_nginx PORT CONNECTIONS LISTEN_EXTRA MAIN_EXTRA: nginx (1 worker,
# access_log off) on 127.0.0.1:PORT pinned to SERVER_CPU, serving a
# 612-byte index.html from $work/html, once it answers; its pid in
# $work/nginx.pid. LISTEN_EXTRA follows the listen address (" backlog=N"),
# MAIN_EXTRA is a line of nginx.conf's main context.
bench_nginx() {
	local port=$1 conns=$2 listen_extra=$3 main_extra=$4
	chmod 755 "$work" # nginx's worker reads the document as another user
	mkdir -p "$work/html" "$work/tmp"
	head -c 612 /dev/zero | tr '\0' 'x' >"$work/html/index.html"
	chmod 644 "$work/html/index.html"
	cat >"$work/nginx.conf" <<CONF
worker_processes 1;
${main_extra:+$main_extra
}pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections $conns; }
http {
	access_log off;
	keepalive_requests 100000000;
	client_body_temp_path $work/tmp;
	proxy_temp_path $work/tmp;
	fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp;
	scgi_temp_path $work/tmp;
	server { listen 127.0.0.1:$port$listen_extra; root $work/html; }
}
CONF
	taskset -c "$SERVER_CPU" nginx -c "$work/nginx.conf"
	for _ in $(seq 50); do
		curl -fs "http://127.0.0.1:$port/index.html" >/dev/null 2>&1 && break
		sleep 0.1
	done
}

# bench_cmd TOOL PEER: cmd, the command line of TOOL: edgebench's PEER
# (EDGEBENCH), old's (OLD), or else PEER itself (ab, wrk).
bench_cmd() {
	case $1 in
	edgebench) cmd=("$EDGEBENCH" "$2" --no-system) ;;
	old) cmd=("$OLD" "$2" --no-system) ;;
	*) cmd=("$2") ;;
	esac
}

# bench_order ROUND: order, the words of tools, reversed in even rounds
# (the tools alternate from one round to the next).
bench_order() {
	order=($tools)
	(($1 % 2 == 0)) && order=($(printf '%s\n' "${order[@]}" | tac))
	return 0
}

# bench_median: the median of the numbers on stdin (spaces or lines).
bench_median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench_collector: COLLECTOR, built from root unless set.
bench_collector() {
	if [ -z "${COLLECTOR:-}" ]; then
		(cd "$root" && go build -o "$work/edgebench-collector" ./cmd/edgebench-collector)
		COLLECTOR=$work/edgebench-collector
	fi
}

rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# bench_serve BROKER_PORT WEB_PORT LOG_LEVEL WAIT_PORT: COLLECTOR serve on
# $work/c.db and $work/accounts.yaml, on loopback, its log in
# $work/serve.log; once WAIT_PORT takes connections and 2 s more, col is
# its pid and idle its RSS (kB).
bench_serve() {
	"$COLLECTOR" serve --db "$work/c.db" --listen "127.0.0.1:$1" --web "127.0.0.1:$2" \
		--accounts "$work/accounts.yaml" --log-level "$3" >"$work/serve.log" 2>&1 &
	col=$!
	for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$4") 2>/dev/null && break; sleep 0.1; done
	sleep 2
	idle=$(rss "$col")
}

# bench_sample PID: max, the collector's highest RSS (kB) sampled every
# 0.1 s while PID runs.
bench_sample() {
	max=0
	while kill -0 "$1" 2>/dev/null; do
		r=$(rss "$col")
		[ "$r" -gt "$max" ] && max=$r
		sleep 0.1
	done
}

# bench_port: a TCP port free on 127.0.0.1 now.
bench_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# PostgreSQL: a private cluster (fsync on) under $work/pg, started once by
# start_pg (pgport, pgdata and pgpid set; pgdata "" until then), stopped
# by stop_pg from the script's cleanup.
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
start_pg() {
	[ -n "$pgdata" ] && return
	[ -x "$pgbin/initdb" ] || { echo "${0##*/}: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
	pgport=$(bench_port)
	pgdata="$work/pg/data"
	mkdir -p "$work/pg"
	[ "$(id -u)" = 0 ] && chown postgres: "$work/pg"
	as_pg "$pgbin/initdb" -D "$pgdata" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
	as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$work/pg/log" -w \
		-o "-c listen_addresses=127.0.0.1 -p $pgport -c unix_socket_directories='' ${PGOPTS:-}" start >/dev/null
	pgpid=$(head -n 1 "$pgdata/postmaster.pid")
}
stop_pg() { [ -n "$pgdata" ] && as_pg "$pgbin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null 2>&1 || true; }
