#!/usr/bin/env bash
# A fleet's history at scale (issue 29): fills one collector over MQTT with a
# generated history (DEVICES devices, default 250, each with results an hour
# apart, 3 % noise and a planted 15 % step on one device: bench/history) and,
# at each size of STAGES (results per device, default "40 400 4000": 10 k,
# 100 k and 1 M results), with nothing arriving, measures:
#
#   idle     the collector's CPU over IDLE seconds (default 120: two passes
#            of its minute loop), % of one core; on PostgreSQL the server's
#            processes are counted beside it ("collector+postgres")
#   rss      the collector's resident memory then (VmRSS), MB
#   pages    the time of GET /metrics, the fleet page (/), /changes, the run
#            page of one device's latest result, `changes --since 30d` and
#            `compare --by device` (each the median of REPS, default 3; once
#            when the first took over 10 s; "fail" with the HTTP status or
#            exit status, ">T" when it did not answer in PAGE_TIMEOUT, default
#            120 s)
#   ingest   results/s stored and acked while the history is there: the next
#            INGEST results per device (default 40, 10 k results), part of
#            the next stage's history, generated before the clock starts
#            (history -ahead): the generator shares the box, a fleet's
#            devices would not
#
#   bench/history.sh                       # SQLite, then PostgreSQL
#   ENGINES=sqlite STAGES="40 400" bench/history.sh
#   COLLECTOR=/tmp/old/edgebench-collector bench/history.sh   # another build
#
# It prints a line "RESULT engine results idle rss metrics fleet changes run
# changes-cli compare ingest" per stage, then the table of bench/README.md.
# Nothing else should run on the box meanwhile; say so with the figures when
# something did.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES=${DEVICES:-250}
STAGES=${STAGES:-40 400 4000}
ENGINES=${ENGINES:-sqlite postgres}
IDLE=${IDLE:-120}
REPS=${REPS:-3}
INGEST=${INGEST:-40}
PAGE_TIMEOUT=${PAGE_TIMEOUT:-120}
SETTLE=${SETTLE:-30}

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

if [ -n "${COLLECTOR:-}" ]; then
	cp "$COLLECTOR" "$tmp/edgebench-collector"
else
	go build -o "$tmp/edgebench-collector" ./cmd/edgebench-collector
fi
go build -o "$tmp/history" ./bench/history
wait_port() { for _ in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "history.sh: nothing listens on $1" >&2; exit 1; }

psqlq() { "$pgbin/psql" -qtAX -h 127.0.0.1 -p "$pgport" -U postgres -d "$1" -c "$2"; }

# cpu_ticks PID...: the user and system ticks of the processes.
cpu_ticks() { local t=0 p; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "$t"; }
pg_pids() { [ -n "$pgdata" ] && { echo "$pgpid"; ps -o pid= --ppid "$pgpid"; } || true; }

# timed NAME CMD...: the median of REPS runs' seconds, ">T" or "fail(...)".
timed() {
	local name=$1 t rc times=() n
	shift
	for n in $(seq "$REPS"); do
		local s e
		s=$(date +%s.%N)
		rc=0
		timeout "$PAGE_TIMEOUT" "$@" >"$tmp/out.$name" 2>&1 || rc=$?
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		if [ "$rc" = 124 ]; then echo ">${PAGE_TIMEOUT}s"; return; fi
		if [ "$rc" != 0 ]; then echo "fail($(head -c 60 "$tmp/out.$name" | tr -cs 'A-Za-z0-9.:' '_'))"; return; fi
		times+=("$t")
		[ "$(echo "$t > 10" | bc)" = 1 ] && break
	done
	printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.3f\n", a[int((NR+1)/2)]}'
}
# get URL: fails on an HTTP status other than 200.
cat >"$tmp/get" <<'EOF2'
#!/usr/bin/env bash
code=$(curl -sS -o /dev/null -w '%{http_code}' "$1") || exit 1
[ "$code" = 200 ] || { echo "HTTP $code"; exit 1; }
EOF2
chmod +x "$tmp/get"

# measure ENGINE DSN PID WEB: one stage's line.
measure() {
	local engine=$1 dsn=$2 pid=$3 web=$4 n id t0 t1 idle rss others
	if [ "$engine" = postgres ]; then
		n=$(psqlq "$pgname" "SELECT count(*) FROM results")
		id=$(psqlq "$pgname" "SELECT id FROM results WHERE device = 'dev-0000' ORDER BY received DESC, id DESC LIMIT 1")
	else
		n=$(sqlite3 "file:$dsn?mode=ro" "SELECT count(*) FROM results")
		id=$(sqlite3 "file:$dsn?mode=ro" "SELECT id FROM results WHERE device = 'dev-0000' ORDER BY received DESC, id DESC LIMIT 1")
	fi
	sleep "$SETTLE"
	others=$(pg_pids)
	t0=$(cpu_ticks "$pid" $others)
	sleep "$IDLE"
	others=$(pg_pids)
	t1=$(cpu_ticks "$pid" $others)
	idle=$(echo "scale=1; 100 * ($t1 - $t0) / $(getconf CLK_TCK) / $IDLE" | bc)
	rss=$(awk '/VmRSS/ {printf "%d", $2/1024}' "/proc/$pid/status")
	local m f c r cc cmp
	m=$(timed metrics "$tmp/get" "http://$web/metrics")
	f=$(timed fleet "$tmp/get" "http://$web/")
	c=$(timed changes "$tmp/get" "http://$web/changes")
	r=$(timed run "$tmp/get" "http://$web/runs/$id")
	cc=$(timed changescli "$tmp/edgebench-collector" changes --db "$dsn" --since 720h)
	cmp=$(timed compare "$tmp/edgebench-collector" compare --by device --db "$dsn")
	echo "$n $idle $rss $m $f $c $r $cc $cmp"
}

# run ENGINE: every stage on a new store.
run() {
	local engine=$1 dsn mqtt web pid cur=0 stage line ing
	mqtt=$(bench_port)
	web=$(bench_port)
	"$tmp/history" -devices "$DEVICES" -write-accounts "$tmp/accounts.yaml"
	if [ "$engine" = postgres ]; then
		start_pg
		pgname=hist$RANDOM$RANDOM
		psqlq postgres "CREATE DATABASE $pgname"
		dsn="postgres://postgres@127.0.0.1:$pgport/$pgname?sslmode=disable"
	else
		dsn="$tmp/history-$RANDOM.db"
	fi
	"$tmp/edgebench-collector" serve --db "$dsn" --web "127.0.0.1:$web" --listen "127.0.0.1:$mqtt" \
		--accounts "$tmp/accounts.yaml" --log-level warn 2>"$tmp/collector-$engine.log" &
	pid=$!
	pids+=("$pid")
	wait_port "$web"
	wait_port "$mqtt"
	sleep 1
	for stage in $STAGES; do
		echo "$engine: filling to $stage results per device" >&2
		[ "$cur" -lt "$stage" ] && "$tmp/history" -broker "tcp://127.0.0.1:$mqtt" -devices "$DEVICES" -from "$cur" -to "$stage" >&2
		cur=$stage
		line=$(measure "$engine" "$dsn" "$pid" "127.0.0.1:$web")
		ing=$("$tmp/history" -ahead -broker "tcp://127.0.0.1:$mqtt" -devices "$DEVICES" -from "$cur" -to $((cur + INGEST)) |
			sed -n 's/.*: \([0-9]*\) results\/s/\1/p')
		cur=$((cur + INGEST))
		echo "RESULT $engine $line ${ing:-fail}"
		echo "RESULT $engine $line ${ing:-fail}" >&2
	done
	kill -TERM "$pid"
	wait "$pid" || true
}

# PostgreSQL started here, not in run's subshell of the pipe below: the
# trap's stop_pg sees it and stops it (it outlived the script before).
case " $ENGINES " in *" postgres "*) start_pg ;; esac
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
: >"$tmp/results"
for e in $ENGINES; do
	run "$e" | tee -a "$tmp/results"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo
python3 - "$tmp/results" <<'PY'
import sys
print("| store | results | idle CPU % (collector+postgres) | RSS MB | /metrics s | fleet page s | /changes s | run page s | `changes` s | `compare --by device` s | ingest results/s |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for l in open(sys.argv[1]):
    f = l.split()
    if not f or f[0] != "RESULT":
        continue
    print("| " + " | ".join([f[1], f"{int(f[2]):,}"] + f[3:]) + " |")
PY
