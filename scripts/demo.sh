#!/usr/bin/env bash
# scripts/demo.sh (make demo): the whole loop on one machine, on loopback.
# A collector with its embedded broker and SQLite store, two agents
# labelled board=pi4 and board=pi5, one target (nginx when it is
# installed, else the built-in one), the same load test run DEMO_REPEAT
# times on both agents through the collector, and the comparison of the
# two boards: one table, one spec, medians with their 95 % interval and
# the verdict of the difference. The server and the agents run on cores
# of their own (taskset) when there are two or more. Then, where the
# machine allows it (root, ip, nginx), one comparison across two
# machines: a third agent (pi-t) and its nginx in a network namespace
# behind a veth pair, that nginx measured by pi-t itself and from the
# host by pi-a (trigger --target-device), side by side with the verdicts;
# elsewhere it says why. It stops and removes everything it started.
#
# Settings (environment, or make demo DEMO_REPEAT=10):
#   DEMO_BROKER    the embedded broker's address      (127.0.0.1:18831; with
#                  the namespace, its port on this side's end of the veth pair)
#   DEMO_WEB       the web UI and API's address       (127.0.0.1:18081)
#   DEMO_TARGET    the built-in target's address      (127.0.0.1:18091)
#   DEMO_NGINX     nginx's address, when installed    (127.0.0.1:18092)
#   DEMO_REPEAT    runs per agent, at least 6 for an interval (6)
#   DEMO_DURATION  each run's length                  (1s)
#   DEMO_BIN       the folder of the binaries          (bin)
#   DEMO_TWO=0     no comparison across two machines
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DEMO_BIN:-$root/bin}
work=$(mktemp -d)
chmod 755 "$work"
pids=()
netns=''
# shellcheck source=twobox.sh
. "$root/scripts/twobox.sh"
cleanup() {
	twobox_stop
	[ -n "${DEMO_KEEP_LOGS:-}" ] && cp "$work"/*.log "$DEMO_KEEP_LOGS"/ 2>/dev/null
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

# Two machines in one: a network namespace (the target's machine) behind
# a veth pair, on a 10.x /24 no route or address of this box uses. Only
# that namespace's address is ever loaded: the agents' fleet file lists it
# alone.
nginx_bin=$(command -v nginx || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true)
two_why=''
if [ "${DEMO_TWO:-1}" = 0 ]; then two_why="DEMO_TWO=0"
elif [ "$(id -u)" != 0 ]; then two_why="network namespaces need root"
elif ! command -v ip >/dev/null; then two_why="no ip (apt-get install iproute2)"
elif [ -z "$nginx_bin" ]; then two_why="no nginx to serve in the namespace"
else
	net=$(twobox_net)
	ns="ebdemo-$$" hif="ebd$$h" nif="ebd$$n"
	if [ -z "$net" ]; then
		two_why="no free 10.x /24 for the namespace"
	elif ! err=$(twobox_make "$ns" "$hif" "$nif" "$net" 2>&1); then
		two_why="the namespace could not be made: $err"
	fi
	netns=$ns
	host_addr=${net}1 ns_addr=${net}2
fi
if [ -n "$two_why" ]; then
	netns=''
else
	# The broker on this side's end of the veth pair, on DEMO_BROKER's
	# port: both sides reach it.
	BROKER=$host_addr:${BROKER##*:}
	echo "$ns_addr" >"$work/boards"
fi

cat >"$work/accounts.yaml" <<YAML
collector: {username: collector, password: demo-collector}
devices:
  - {fleet: demo, id: pi-a, password: demo-a}
  - {fleet: demo, id: pi-b, password: demo-b}
  - {fleet: demo, id: pi-t, password: demo-t}
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
# on CPUS: the words that run a program on those cores (taskset execs
# it: $! of "$(on ...) prog &" is the program's, which cleanup kills), or
# none.
on() {
	if [ -n "$1" ]; then printf 'taskset -c %s' "$1"; fi
}

echo "== collector: embedded broker on $BROKER, web UI on http://$WEB/, store $work/demo.db"
$(on "$gen_cpus") "$bin/edgebench-collector" serve --listen "$BROKER" --web "$WEB" --db "$work/demo.db" \
	--accounts "$work/accounts.yaml" --log-level warn 2>"$work/collector.log" &
pids+=($!)

# One target, the same for both agents: nginx when it is installed, else
# the built-in one. Both agents do the same work, so that their runs
# land in one table and compare.
$(on "$srv_cpus") "$bin/edgebench" serve --addr "$TARGET" 2>/dev/null &
pids+=($!)
url="http://$TARGET/bytes/2159"
server=builtin
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
	twobox_nginx "$work" nginx "$NGINX"
	$(on "$srv_cpus") "$(command -v nginx || echo /usr/sbin/nginx)" -c "$work/nginx.conf"
	server=nginx url="http://$NGINX/index.html"
fi

agent() { # id password label [the words that run it in the namespace]
	# With the namespace, the agents may load its address, and only it.
	local fleet_file=EDGEBENCH_POLICY_FLEET_FILE=
	[ -n "$netns" ] && fleet_file="EDGEBENCH_POLICY_FLEET_FILE=$work/boards"
	env EDGEBENCH_BROKER_URL="tcp://$BROKER" EDGEBENCH_BROKER_USERNAME="$1" EDGEBENCH_BROKER_PASSWORD="$2" \
		EDGEBENCH_DEVICE_ID="$1" EDGEBENCH_FLEET=demo EDGEBENCH_LABELS="$3" \
		EDGEBENCH_STATE_DIR="$work/$1" EDGEBENCH_SPOOL_DIR="$work/$1/spool" EDGEBENCH_LOG_LEVEL=warn \
		"$fleet_file" $(on "$gen_cpus") ${4:-} "$bin/edgebench" agent 2>"$work/$1.log" &
	pids+=($!)
}
agent pi-a demo-a "board=pi4,server=$server"
agent pi-b demo-b "board=pi5,server=$server"
if [ -n "$netns" ]; then
	# The target's machine: its own nginx (the same configuration as
	# this side's), and its agent, in the namespace.
	twobox_nginx "$work" nginx-t "$ns_addr:80"
	$(on "$srv_cpus") ip netns exec "$netns" "$nginx_bin" -c "$work/nginx-t.conf"
	agent pi-t demo-t "board=target,server=nginx" "ip netns exec $netns"
fi
if [ -n "$srv_cpus" ]; then
	echo "== pinned (taskset): $server on cpu $srv_cpus, the agents' load generators and the collector on cpu $gen_cpus"
else
	echo "note: $cores core(s)$(command -v taskset >/dev/null || echo ', no taskset'): the load generator and $server share the cores," \
		"each takes the other's CPU, and the verdicts will call the runs NOT VALID (the reasons follow the comparison)" >&2
fi

want=2
[ -n "$netns" ] && want=3
for _ in $(seq 100); do
	n=$("$bin/edgebench-collector" devices --db "$work/demo.db" 2>/dev/null | grep -c online || true)
	[ "$n" -ge "$want" ] && break
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
		# awk reads the whole report: a reader that stops early (grep -m)
		# would end show with SIGPIPE, and pipefail the demo.
		"$bin/edgebench-collector" show "$id" --db "$work/demo.db" | awk -v id="$id" '/^  verdict/ {n = 2} n-- > 0 {print id " " $0}'
	done
fi

# One comparison across two machines: the namespace's nginx measured on
# its own machine (pi-t loads itself) and from the other one (pi-a loads
# it, pi-t watches itself), side by side with their verdicts.
echo
if [ -z "$netns" ]; then
	echo "== no comparison across two machines here: $two_why; the runs above are the local ones"
	exit 0
fi
turl="http://$ns_addr/index.html"
echo "== two machines: pi-t's nginx in network namespace $netns ($ns_addr), pi-a on this side ($host_addr)"
echo "== pi-t loads its own nginx: $turl, $REPEAT runs of $DURATION each"
"$bin/edgebench-collector" trigger --server "http://$WEB" --fleet demo --device pi-t --wait --label where=local \
	--repeat "$REPEAT" -c 10 -d "$DURATION" "$turl" >"$work/local.txt"
tail -n 1 "$work/local.txt"
echo "== pi-a loads pi-t's nginx, pi-t watches itself: $REPEAT runs of $DURATION each"
"$bin/edgebench-collector" trigger --server "http://$WEB" --fleet demo --device pi-a --target-device pi-t --wait --label where=remote \
	--repeat "$REPEAT" -c 10 -d "$DURATION" "$turl" >"$work/remote.txt"
tail -n 1 "$work/remote.txt"
echo
echo "== the same nginx, measured on its machine and from the other: medians of each side's runs"
"$bin/edgebench-collector" compare --db "$work/demo.db" --by where --metric rps,p50,p99,cpu --fleet demo --device pi-t | tee "$work/two.txt"
echo
echo "== side by side: the server's CPU per request is its CPU time over the requests it served"
printf '%-8s %12s %14s %20s\n' where req/s "server CPU %" "server CPU/request"
for w in local remote; do
	awk -v w="$w" '$1 == w && $3 > 0 {printf "%-8s %12s %14s %17.1f us\n", w, $3, $(NF - 2), $(NF - 2) * 1e4 / $3}' "$work/two.txt"
done
echo
echo "== their verdicts, run by run (local: pi-t loads itself; remote: pi-a loads pi-t)"
for w in local remote; do
	for id in $("$bin/edgebench-collector" runs --db "$work/demo.db" --fleet demo --device pi-t --label "where=$w" | awk 'NR > 1 {print $1}'); do
		# awk reads the whole report (pipefail: see above).
		"$bin/edgebench-collector" show "$id" --db "$work/demo.db" | awk -v w="$w" '/^  verdict/ {sub(/^  verdict +/, ""); print w ": " $0}'
	done
done
