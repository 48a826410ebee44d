#!/usr/bin/env bash
# scripts/demo.sh (make demo): the whole loop on one machine, on loopback.
# A collector with its embedded broker and SQLite store, two agents
# labelled board=pi4 and board=pi5, one target (nginx when it is
# installed, else the built-in one), the same load test run DEMO_REPEAT
# times on both agents through the collector, and the comparison of the
# two boards: one table, one spec, medians with their 95 % interval and
# the verdict of the difference. The server and the agents run on cores
# of their own (taskset) when there are two or more. It stops everything
# it started.
#
# Settings (environment, or make demo DEMO_REPEAT=10):
#   DEMO_BROKER    the embedded broker's address      (127.0.0.1:18831)
#   DEMO_WEB       the web UI and API's address       (127.0.0.1:18081)
#   DEMO_TARGET    the built-in target's address      (127.0.0.1:18091)
#   DEMO_NGINX     nginx's address, when installed    (127.0.0.1:18092)
#   DEMO_REPEAT    runs per agent, at least 6 for an interval (6)
#   DEMO_DURATION  each run's length                  (1s)
#   DEMO_BIN       the folder of the binaries          (bin)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DEMO_BIN:-$root/bin}
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

BROKER=${DEMO_BROKER:-127.0.0.1:18831}
WEB=${DEMO_WEB:-127.0.0.1:18081}
TARGET=${DEMO_TARGET:-127.0.0.1:18091}
NGINX=${DEMO_NGINX:-127.0.0.1:18092}
REPEAT=${DEMO_REPEAT:-6}
DURATION=${DEMO_DURATION:-1s}
if [ "$REPEAT" -lt 6 ] 2>/dev/null; then
	echo "note: DEMO_REPEAT=$REPEAT: fewer than 6 runs per group give no 95 % interval (±∞)" >&2
fi

cat >"$work/accounts.yaml" <<YAML
collector: {username: collector, password: demo-collector}
devices:
  - {fleet: demo, id: pi-a, password: demo-a}
  - {fleet: demo, id: pi-b, password: demo-b}
YAML

# The load generator and the server on cores of their own: beside each
# other on the same cores, each takes the other's CPU (on 2 cores nginx
# had 25-45 %, edgebench 22-51 %, the rest interrupts and each other), and
# every run's verdict rightly said NOT VALID. With 2 cores or more the
# server (nginx or the built-in target) gets the upper half of them, the
# agents and the collector the lower half (taskset); with one core, or
# without taskset, they share and the demo says so.
cores=$(nproc 2>/dev/null || echo 1)
gen_cpus='' srv_cpus=''
if [ "$cores" -ge 2 ] && command -v taskset >/dev/null; then
	half=$((cores / 2))
	gen_cpus="0-$((half - 1))" srv_cpus="$half-$((cores - 1))"
fi
pin() { # cpus command...: the command on those cores, or as it is, in its place (exec: run with &, $! is the command, which cleanup stops)
	local cpus=$1
	shift
	if [ -n "$cpus" ]; then exec taskset -c "$cpus" "$@"; else exec "$@"; fi
}

echo "== collector: embedded broker on $BROKER, web UI on http://$WEB/, store $work/demo.db"
pin "$gen_cpus" "$bin/edgebench-collector" serve --listen "$BROKER" --web "$WEB" --db "$work/demo.db" \
	--accounts "$work/accounts.yaml" --log-level warn 2>"$work/collector.log" &
pids+=($!)

# One target, the same for both agents: nginx when it is installed, else
# the built-in one. Both agents do the same work, so that their runs
# land in one table and compare.
pin "$srv_cpus" "$bin/edgebench" serve --addr "$TARGET" 2>/dev/null &
pids+=($!)
url="http://$TARGET/bytes/2159"
server=builtin
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
	mkdir -p "$work/html" "$work/tmp"
	head -c 2159 /dev/zero | tr '\0' x >"$work/html/index.html"
	cat >"$work/nginx.conf" <<NGX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
	uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
	server { listen $NGINX; root $work/html; }
}
NGX
	(pin "$srv_cpus" "$(command -v nginx || echo /usr/sbin/nginx)" -c "$work/nginx.conf")
	server=nginx url="http://$NGINX/index.html"
fi

agent() { # id password label
	EDGEBENCH_BROKER_URL="tcp://$BROKER" EDGEBENCH_BROKER_USERNAME="$1" EDGEBENCH_BROKER_PASSWORD="$2" \
		EDGEBENCH_DEVICE_ID="$1" EDGEBENCH_FLEET=demo EDGEBENCH_LABELS="$3" \
		EDGEBENCH_STATE_DIR="$work/$1" EDGEBENCH_SPOOL_DIR="$work/$1/spool" EDGEBENCH_LOG_LEVEL=warn \
		pin "$gen_cpus" "$bin/edgebench" agent 2>"$work/$1.log" &
	pids+=($!)
}
agent pi-a demo-a "board=pi4,server=$server"
agent pi-b demo-b "board=pi5,server=$server"
if [ -n "$srv_cpus" ]; then
	echo "== pinned (taskset): $server on cpu $srv_cpus, the agents' load generators and the collector on cpu $gen_cpus"
else
	echo "note: $cores core(s)$(command -v taskset >/dev/null || echo ', no taskset'): the load generator and $server share the cores," \
		"each takes the other's CPU, and the verdicts will call the runs NOT VALID (the reasons follow the comparison)" >&2
fi

for _ in $(seq 100); do
	n=$("$bin/edgebench-collector" devices --db "$work/demo.db" 2>/dev/null | grep -c online || true)
	[ "$n" -ge 2 ] && break
	sleep 0.2
done
echo "== devices"
"$bin/edgebench-collector" devices --db "$work/demo.db"

# One agent at a time: two agents on one machine at once would each take
# the other's load generator for another process on their cores, and
# their verdicts would rightly call the runs not valid.
for dev in pi-a pi-b; do
	echo "== $dev: $url ($server), $REPEAT runs of $DURATION each"
	"$bin/edgebench-collector" trigger --server "http://$WEB" --fleet demo --device "$dev" --wait --repeat "$REPEAT" -c 10 -d "$DURATION" "$url"
done

echo
echo "== comparison by board: the same work on pi4 and pi5"
"$bin/edgebench-collector" compare --db "$work/demo.db" --by board --base pi4 --metric rps,p50,p99,cpu | tee "$work/compare.txt"
# Runs the verdict calls not valid: say why (the box busy with other
# work, or the generator and the server on the same cores).
if grep -q "not valid by their verdict" "$work/compare.txt"; then
	echo
	echo "== why some runs are not valid: their verdicts"
	for id in $("$bin/edgebench-collector" runs --db "$work/demo.db" | awk 'NR > 1 && /NOT VALID/ {print $1}'); do
		"$bin/edgebench-collector" show "$id" --db "$work/demo.db" | grep -m 1 -A 1 '^  verdict' | sed "s/^/$id /"
	done
fi
