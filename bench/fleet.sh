#!/usr/bin/env bash
# Fleet scale: DEVICES simulated devices (default 1000) on real MQTT
# connections, each publishing RESULTS results (default 5), into one or more
# edgebench-collector processes. Prints results/s stored and acked, checks
# that none was lost or doubled, and each collector's peak RSS.
#
#   bench/fleet.sh                                   # 1 collector, SQLite, its embedded broker
#   bench/fleet.sh --db postgres --collectors 2      # 2 collectors of a share group, one PostgreSQL, mosquitto
#   bench/fleet.sh --db sqlite --broker mosquitto    # 1 collector, SQLite, behind mosquitto
#   bench/fleet.sh --compare                         # the table of bench/README.md: see below
#
# --db sqlite|postgres   the store; postgres starts a private PostgreSQL
#                        (initdb in a temporary folder, fsync on, as the
#                        postgres user when run as root) on a free port,
#                        with the settings in PGOPTS ("-c name=value ...")
# --collectors N         collector processes; more than one needs postgres
#                        and an external broker, and they share the ingest
#                        ($share/ingest)
# --broker embedded|mosquitto   the collector's own broker, or a private
#                        mosquitto (default: embedded for one collector)
# --compare              ROUNDS rounds (default 3) of 1 collector on SQLite
#                        and 2 on PostgreSQL, both behind mosquitto, for
#                        1,000 and 5,000 devices (SIZES), alternating, then
#                        the medians
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES=${DEVICES:-1000}
RESULTS=${RESULTS:-5}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-1000 5000}
db=sqlite collectors=1 broker="" compare=""
while [ $# -gt 0 ]; do
	case "$1" in
	--db) db=$2; shift 2 ;;
	--collectors) collectors=$2; shift 2 ;;
	--broker) broker=$2; shift 2 ;;
	--devices) DEVICES=$2; shift 2 ;;
	--results) RESULTS=$2; shift 2 ;;
	--compare) compare=1; shift ;;
	*) echo "fleet.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
	esac
done
case "$db" in sqlite | postgres) ;; *) echo "fleet.sh: --db sqlite or postgres" >&2; exit 2 ;; esac
[ -n "$broker" ] || { [ "$collectors" -gt 1 ] && broker=mosquitto || broker=embedded; }
case "$broker" in embedded | mosquitto) ;; *) echo "fleet.sh: --broker embedded or mosquitto" >&2; exit 2 ;; esac
if [ "$collectors" -gt 1 ] && { [ "$db" != postgres ] || [ "$broker" != mosquitto ]; }; then
	echo "fleet.sh: several collectors need --db postgres and --broker mosquitto" >&2
	exit 2
fi

tmp=$(mktemp -d)
work=$tmp root=$PWD
# shellcheck source=lib.sh
. bench/lib.sh
chmod 755 "$tmp"
pids=()
pgdata=""
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	stop_pg
	rm -rf "$tmp"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

go build -o "$tmp/edgebench-collector" ./cmd/edgebench-collector
go build -o "$tmp/fleet" ./bench/fleet
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "fleet.sh: nothing listens on $1" >&2; exit 1; }

new_pgdb() {
	local name=fleet$RANDOM$RANDOM
	"$pgbin/psql" -q -h 127.0.0.1 -p "$pgport" -U postgres -d postgres -c "CREATE DATABASE $name" >/dev/null
	echo "postgres://postgres@127.0.0.1:$pgport/$name?sslmode=disable"
}

# run DB COLLECTORS BROKER DEVICES: one measured run; its last line is
# "RESULT db collectors broker devices results/s lost doubled rss1 rss2...".
run() {
	local db=$1 n=$2 broker=$3 devices=$4 dsn mq web args=() rss0=() i
	local mqtt
	mqtt=$(bench_port)
	"$tmp/fleet" -devices "$devices" -write-accounts "$tmp/accounts.yaml"
	if [ "$db" = postgres ]; then start_pg; dsn=$(new_pgdb); else dsn="$tmp/edgebench-$RANDOM.db"; fi
	local mqpid=""
	if [ "$broker" = mosquitto ]; then
		printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\nlog_type error\n%b' "$mqtt" "${MOSQOPTS:-}" >"$tmp/mosquitto.conf"
		/usr/sbin/mosquitto -c "$tmp/mosquitto.conf" &
		mqpid=$!
		pids+=("$mqpid")
		wait_port "$mqtt"
		args=(--broker "tcp://127.0.0.1:$mqtt")
		[ "$n" -gt 1 ] && args+=(--share ingest)
	else
		args=(--listen "127.0.0.1:$mqtt" --accounts "$tmp/accounts.yaml")
	fi
	local cpids=()
	for i in $(seq "$n"); do
		web=$(bench_port)
		"$tmp/edgebench-collector" serve --db "$dsn" --web "127.0.0.1:$web" "${args[@]}" --log-level warn &
		cpids+=($!)
		pids+=($!)
		wait_port "$web"
	done
	[ "$broker" = embedded ] && wait_port "$mqtt"
	sleep 1 # subscribed
	for p in "${cpids[@]}"; do rss0+=("$(awk '/VmRSS/ {print $2}' "/proc/$p/status")"); done
	local out
	out=$("$tmp/fleet" -broker "tcp://127.0.0.1:$mqtt" -devices "$devices" -results "$RESULTS" -timeout 5m -db "$dsn" 2>&1) || true
	echo "$out" >&2
	local rps lost doubled rss=""
	rps=$(echo "$out" | sed -n 's/.*acked in .*: \([0-9]*\) results\/s/\1/p')
	lost=$(echo "$out" | sed -n 's/^store: \([0-9]*\) results, \([0-9]*\) runs (want \([0-9]*\) each)/\1 \2 \3/p' | awk '{l=$3-$1; print (l>0?l:0)}')
	doubled=$(echo "$out" | sed -n 's/^store: \([0-9]*\) results, \([0-9]*\) runs (want \([0-9]*\) each)/\1 \2 \3/p' | awk '{d=$2-$3; if ($1-$3>d) d=$1-$3; print (d>0?d:0)}')
	for i in "${!cpids[@]}"; do
		rss+=" $(awk -v r0="${rss0[$i]}" '/VmHWM/ {printf "%d/%d", r0/1024, $2/1024}' "/proc/${cpids[$i]}/status")"
	done
	for p in "${cpids[@]}"; do kill -TERM "$p"; wait "$p" || true; done
	[ -n "$mqpid" ] && { kill "$mqpid"; wait "$mqpid" 2>/dev/null || true; }
	echo "RESULT $db $n $broker $devices ${rps:-failed} ${lost:-?} ${doubled:-?}$rss"
}

[ "$db" = postgres ] || [ -n "$compare" ] && start_pg # here, not in a subshell: the trap stops it
if [ -z "$compare" ]; then
	run "$db" "$collectors" "$broker" "$DEVICES" >"$tmp/run.out"
	set -- $(tail -n 1 "$tmp/run.out")
	shift 5
	echo "$DEVICES devices x $RESULTS results, $collectors collector(s), $db, $broker broker: $1 results/s, lost $2, doubled $3; collector RSS MB at start/peak:${*:4}"
	exit 0
fi

# --compare: the rows alternate within each round, so that both see the
# same machine.
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
: >"$tmp/results"
for r in $(seq "$ROUNDS"); do
	for size in $SIZES; do
		for cfg in "sqlite 1" "postgres 2"; do
			set -- $cfg
			echo "round $r: $size devices, $2 collector(s) on $1" >&2
			run "$1" "$2" mosquitto "$size" >"$tmp/run.out"
			tail -n 1 "$tmp/run.out" | tee -a "$tmp/results" >&2
		done
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo
python3 - "$tmp/results" "$RESULTS" "$SIZES" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith("RESULT ")]
per, sizes = sys.argv[2], sys.argv[3].split()
print("| devices x results | collectors | store | results/s: median (rounds) | lost | doubled | RSS MB per collector, start/peak |")
print("|---|---|---|---|---|---|---|")
for size in sizes:
    for db, n in (("sqlite", "1"), ("postgres", "2")):
        rs = [r for r in rows if r[1] == db and r[2] == n and r[4] == size]
        ok = [int(r[5]) for r in rs if r[5].isdigit()]
        med = f"{statistics.median(ok):,.0f}" if ok else "failed"
        lost = sum(int(r[6]) for r in rs if r[6].isdigit())
        dbl = sum(int(r[7]) for r in rs if r[7].isdigit())
        rss = "; ".join(", ".join(r[8:]) for r in rs)
        print(f"| {int(size):,} x {per} | {n} | {db} | {med} ({', '.join(r[5] for r in rs)}) | {lost} | {dbl} | {rss} |")
PY
