#!/usr/bin/env bash
# scripts/demo.sh (make demo): the whole loop on one machine, on loopback.
# A collector with its embedded broker and SQLite store, two agents with
# different labels, a built-in target (and nginx when it is installed),
# repeated load tests triggered through the collector, and the comparison.
# It stops everything it started.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
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
REPEAT=${DEMO_REPEAT:-4}
DURATION=${DEMO_DURATION:-2s}

cat >"$work/accounts.yaml" <<YAML
collector: {username: collector, password: demo-collector}
devices:
  - {fleet: demo, id: pi-a, password: demo-a}
  - {fleet: demo, id: pi-b, password: demo-b}
YAML

echo "== collector: embedded broker on $BROKER, web UI on http://$WEB/, store $work/demo.db"
"$bin/edgebench-collector" serve --listen "$BROKER" --web "$WEB" --db "$work/demo.db" \
	--accounts "$work/accounts.yaml" --log-level warn 2>"$work/collector.log" &
pids+=($!)

# Two targets: the built-in one, and nginx when it is installed (else the
# built-in one again, answering after 1 ms).
"$bin/edgebench" serve --addr "$TARGET" 2>/dev/null &
pids+=($!)
url_a="http://$TARGET/bytes/2159"
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
	"$(command -v nginx || echo /usr/sbin/nginx)" -c "$work/nginx.conf"
	server_b=nginx url_b="http://$NGINX/index.html"
else
	server_b=builtin-delay url_b="http://$TARGET/delay/1"
fi

agent() { # id password label
	EDGEBENCH_BROKER_URL="tcp://$BROKER" EDGEBENCH_BROKER_USERNAME="$1" EDGEBENCH_BROKER_PASSWORD="$2" \
		EDGEBENCH_DEVICE_ID="$1" EDGEBENCH_FLEET=demo EDGEBENCH_LABELS="$3" \
		EDGEBENCH_STATE_DIR="$work/$1" EDGEBENCH_SPOOL_DIR="$work/$1/spool" EDGEBENCH_LOG_LEVEL=warn \
		"$bin/edgebench" agent 2>"$work/$1.log" &
	pids+=($!)
}
agent pi-a demo-a server=builtin
agent pi-b demo-b "server=$server_b"

for _ in $(seq 100); do
	n=$("$bin/edgebench-collector" devices --db "$work/demo.db" 2>/dev/null | grep -c online || true)
	[ "$n" -ge 2 ] && break
	sleep 0.2
done
echo "== devices"
"$bin/edgebench-collector" devices --db "$work/demo.db"

echo "== pi-a (server=builtin): $url_a, $REPEAT runs"
"$bin/edgebench-collector" trigger --server "http://$WEB" --fleet demo --device pi-a --wait --repeat "$REPEAT" -c 20 -d "$DURATION" "$url_a"
echo "== pi-b (server=$server_b): $url_b, $REPEAT runs"
"$bin/edgebench-collector" trigger --server "http://$WEB" --fleet demo --device pi-b --wait --repeat "$REPEAT" -c 20 -d "$DURATION" "$url_b"

echo "== comparison by server"
"$bin/edgebench-collector" compare --db "$work/demo.db" --by server --metric rps,p50,p99,cpu
