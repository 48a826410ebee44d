#!/usr/bin/env bash
# bench/broker-logins.sh: the collector's embedded broker against login
# floods and a crowded login gate (issue 19, items 3 and 6). Each attack
# runs against a fresh `edgebench-collector serve` on loopback whose
# devices have bcrypt passwords (cost 10); bench/brokerattack prints what
# it saw, and the collector's peak RSS (VmHWM) follows.
#
#   bench/broker-logins.sh                      # this tree's collector
#   COLLECTOR=/path/to/edgebench-collector bench/broker-logins.sh   # another build (an older one)
set -euo pipefail
BROKER_PORT=${BROKER_PORT:-18841}
WEB_PORT=${WEB_PORT:-18092}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
col=
trap '[ -n "$col" ] && kill "$col" 2>/dev/null; rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/brokerattack" ./bench/brokerattack)
if [ -z "${COLLECTOR:-}" ]; then
	(cd "$root" && go build -o "$work/edgebench-collector" ./cmd/edgebench-collector)
	COLLECTOR=$work/edgebench-collector
fi
h1=$(htpasswd -nbBC 10 pi-1 one | cut -d: -f2)
h2=$(htpasswd -nbBC 10 pi-2 two | cut -d: -f2)
cat >"$work/accounts.yaml" <<EOF2
collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-1, password_bcrypt: "$h1"}
  - {fleet: lab, id: pi-2, password_bcrypt: "$h2"}
EOF2

run() {
	rm -f "$work"/c.db*
	"$COLLECTOR" serve --db "$work/c.db" --listen "127.0.0.1:$BROKER_PORT" --web "127.0.0.1:$WEB_PORT" \
		--accounts "$work/accounts.yaml" --log-level error >"$work/serve.log" 2>&1 &
	col=$!
	for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$BROKER_PORT") 2>/dev/null && break; sleep 0.1; done
	sleep 1
	"$work/brokerattack" -broker "127.0.0.1:$BROKER_PORT" -pid "$col" -user pi-2 -password two -client-id edgebench-lab-pi-2 "$@" || true
	echo "  collector peak RSS: $(awk '/^VmHWM/ {printf "%.1f MB", $2/1024}' "/proc/$col/status")"
	kill "$col" 2>/dev/null || true
	wait "$col" 2>/dev/null || true
	col=
}

run -attack timing -count 20 -target pi-1
run -attack logins -n 40 -count 160 -target pi-1 -sources 1
run -attack logins -n 40 -count 160 -target pi-1 -sources 40
run -attack logins -n 40 -count 160 -target pi-2 -sources 40
run -attack crowd -n 300 -send 1 -sources 1 -hold 30s
run -attack crowd -n 200 -send 2 -sources 40 -hold 30s
