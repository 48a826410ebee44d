#!/usr/bin/env bash
# bench/two-machine.sh: the same nginx measured on its own machine and from
# another, as issue 30's runs across two devices do it, on one box: nginx
# (1 worker, access_log off, the seeds' 2159-byte index.html) and the
# target's agent (pi-t) in a network namespace behind a veth pair, the
# loader's agent (pi-a) and the collector on this side. Each round runs
#   local   trigger --device pi-t URL                       (pi-t loads its own nginx)
#   remote  trigger --device pi-a --target-device pi-t URL  (pi-a loads it, pi-t watches)
# in alternating order, ROUNDS rounds, and prints per run and as medians:
# req/s, the server's CPU per request by the watch (its server CPU % over
# the window, times the window, over the requests) and by /proc (nginx's
# ticks over the whole trigger, over the requests: the witness; it also
# counts the idle seconds around the window), and the verdict. nginx is
# pinned to SERVER_CPU, the agents and the collector to GEN_CPU (taskset).
#
#   bench/two-machine.sh                         # 5 rounds of 5 s, -c 10
#   ROUNDS=7 DURATION=10s CONNS=50 bench/two-machine.sh
#
# Needs root, ip, nginx, taskset, jq; builds both binaries. Every address
# it loads is the namespace's, on a 10.x /24 nothing else on the box uses;
# it removes what it made.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-10}
SERVER_CPU=${SERVER_CPU:-1}
GEN_CPU=${GEN_CPU:-0}
BROKER_PORT=${BROKER_PORT:-18731}
WEB=${WEB:-127.0.0.1:18732}

for tool in ip nginx taskset jq; do
	command -v "$tool" >/dev/null || { echo "bench/two-machine.sh: $tool is missing" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench/two-machine.sh: network namespaces need root" >&2; exit 1; }

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
chmod 755 "$work"
pids=()
netns=''
# shellcheck source=../scripts/twobox.sh
. "$root/scripts/twobox.sh"
cleanup() {
	twobox_stop
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -trimpath -o "$work/edgebench" ./cmd/edgebench && go build -trimpath -o "$work/edgebench-collector" ./cmd/edgebench-collector)
col="$work/edgebench-collector"

net=$(twobox_net)
[ -n "$net" ] || { echo "bench/two-machine.sh: no free 10.x /24" >&2; exit 1; }
netns="ebbench-$$"
twobox_make "$netns" "ebb$$h" "ebb$$n" "$net"
host_addr=${net}1 ns_addr=${net}2
echo "$ns_addr" >"$work/boards"

twobox_nginx "$work" nginx "$ns_addr:80"
taskset -c "$SERVER_CPU" ip netns exec "$netns" nginx -c "$work/nginx.conf"

cat >"$work/accounts.yaml" <<YAML
collector: {username: collector, password: bench-collector}
devices:
  - {fleet: bench, id: pi-a, password: bench-a}
  - {fleet: bench, id: pi-t, password: bench-t}
YAML
taskset -c "$GEN_CPU" "$col" serve --listen "$host_addr:$BROKER_PORT" --web "$WEB" --db "$work/bench.db" \
	--accounts "$work/accounts.yaml" --log-level warn 2>"$work/collector.log" &
pids+=($!)
agent() { # id password [the words that run it in the namespace]
	env EDGEBENCH_BROKER_URL="tcp://$host_addr:$BROKER_PORT" EDGEBENCH_BROKER_USERNAME="$1" EDGEBENCH_BROKER_PASSWORD="$2" \
		EDGEBENCH_DEVICE_ID="$1" EDGEBENCH_FLEET=bench EDGEBENCH_STATE_DIR="$work/$1" EDGEBENCH_SPOOL_DIR="$work/$1/spool" \
		EDGEBENCH_LOG_LEVEL=warn EDGEBENCH_POLICY_FLEET_FILE="$work/boards" \
		taskset -c "$GEN_CPU" ${3:-} "$work/edgebench" agent 2>"$work/$1.log" &
	pids+=($!)
}
agent pi-a bench-a
agent pi-t bench-t "ip netns exec $netns"
for _ in $(seq 150); do
	n=$("$col" devices --db "$work/bench.db" 2>/dev/null | grep -c online || true)
	[ "$n" -ge 2 ] && break
	sleep 0.2
done
[ "$n" -ge 2 ] || { echo "bench/two-machine.sh: the agents did not come online" >&2; cat "$work"/*.log >&2; exit 1; }

# ticks is nginx's user+system CPU ticks, master and worker (/proc).
ticks() {
	local m sum=0 p
	m=$(cat "$work/nginx.pid")
	for p in $m $(cat /proc/"$m"/task/*/children 2>/dev/null); do
		sum=$((sum + $(awk '{sub(/.*\) /, ""); print $12 + $13}' /proc/"$p"/stat)))
	done
	echo "$sum"
}
hz=$(getconf CLK_TCK)
url="http://$ns_addr/index.html"
echo "# $(date -u '+%F %T') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); nginx on cpu $SERVER_CPU, agents and collector on cpu $GEN_CPU"
echo "# $url, -c $CONNS -d $DURATION, $ROUNDS rounds"
printf '%-6s %-7s %10s %14s %14s  %s\n' round where req/s "CPU/req watch" "CPU/req /proc" verdict
: >"$work/rows"
measure() { # round where
	local args=(--device pi-t) t0 t1 id
	[ "$2" = remote ] && args=(--device pi-a --target-device pi-t)
	t0=$(ticks)
	"$col" trigger --server "http://$WEB" --fleet bench "${args[@]}" --wait --label "where=$2" --label "round=$1" \
		-c "$CONNS" -d "$DURATION" "$url" >"$work/trigger.txt" 2>&1 || { cat "$work/trigger.txt" >&2; exit 1; }
	t1=$(ticks)
	id=$("$col" runs --db "$work/bench.db" --fleet bench --label "where=$2" --label "round=$1" --format json | jq -r '.[0].id')
	"$col" show --db "$work/bench.db" --format json "$id" | jq -r --arg w "$2" --arg r "$1" --argjson ticks $((t1 - t0)) --argjson hz "$hz" '
		.runs[0] as $run
		| ($run.completed + ($run.warmup_requests // 0) + ($run.drained.completed // 0)) as $served
		| ([$run.system.summary.procs[]? | select(.role == "server") | .cpu_bp.mean // 0] | add // 0) as $bp
		| [$r, $w, ($run.completed / ($run.duration_us / 1e6)),
		   ($bp / 1e4 * $run.duration_us / $run.completed),
		   ($ticks / $hz * 1e6 / $served),
		   (($run.verdict.limited_by // "-") + (if $run.verdict.valid then ", valid" else ", NOT VALID" end)),
		   ($run.verdict.reasons[0] // "")]
		| @tsv' >>"$work/rows"
	tail -n 1 "$work/rows" | awk -F'\t' '{printf "%-6s %-7s %10.0f %11.1f us %11.1f us  %s\n", $1, $2, $3, $4, $5, $6}'
}
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then measure "$r" local; measure "$r" remote; else measure "$r" remote; measure "$r" local; fi
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "# medians over the rounds"
printf '%-7s %10s %14s %14s  %s\n' where req/s "CPU/req watch" "CPU/req /proc" "verdicts"
for w in local remote; do
	awk -F'\t' -v w="$w" '$2 == w' "$work/rows" >"$work/$w.rows"
	med() { cut -f"$1" "$work/$w.rows" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
	verdicts=$(cut -f6 "$work/$w.rows" | sort | uniq -c | awk '{c = $1; $1 = ""; printf "%s%d x%s", sep, c, $0; sep = "; "}')
	printf '%-7s %10.0f %11.1f us %11.1f us  %s\n' "$w" "$(med 3)" "$(med 4)" "$(med 5)" "$verdicts"
done
echo
echo "# the first reason of each verdict"
awk -F'\t' '{print $1 " " $2 ": " $7}' "$work/rows"
