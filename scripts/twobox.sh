# scripts/twobox.sh: two machines in one box, for scripts/demo.sh and
# bench/two-machine.sh (sourced): a network namespace (the target's
# machine) behind a veth pair on a 10.x /24 that no route or address of
# this box uses, and nginx serving the seeds' 2159-byte index.html. Only
# the namespace's address is ever loaded. Needs root and ip.

# twobox_net: prints a free 10.x.y. prefix (NET), or nothing when 50
# draws found none.
twobox_net() {
	local used c
	used="$(ip -4 route show table all 2>/dev/null) $(ip -4 -o addr show 2>/dev/null)"
	for _ in $(seq 50); do
		c="10.$((200 + RANDOM % 8)).$((RANDOM % 256))."
		case "$used" in *"$c"*) ;; *) echo "$c"; return ;; esac
	done
}

# twobox_make NS HIF NIF NET: the namespace NS with NET.2 on NIF, NET.1 on
# HIF on this side, both up (and the namespace's lo); what ip said on
# stderr and a status when it failed, the namespace then removed.
twobox_make() {
	local ns=$1 hif=$2 nif=$3 net=$4
	if ! { ip netns add "$ns" && ip link add "$hif" type veth peer name "$nif" && ip link set "$nif" netns "$ns" &&
		ip addr add "${net}1/24" dev "$hif" && ip link set "$hif" up && ip -n "$ns" addr add "${net}2/24" dev "$nif" &&
		ip -n "$ns" link set "$nif" up && ip -n "$ns" link set lo up; }; then
		ip netns del "$ns" 2>/dev/null || true
		return 1
	fi
}

# twobox_remove NS: ends the processes left in NS and removes it (its
# veth pair goes with it).
twobox_remove() {
	for p in $(ip netns pids "$1" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
	sleep 0.2
	ip netns del "$1" 2>/dev/null || true
}

# twobox_nginx DIR NAME LISTEN: DIR/NAME.conf, nginx with one worker and
# no access log listening on LISTEN, its pid in DIR/NAME.pid and errors in
# DIR/NAME-error.log, serving DIR/html (made here, with the 2159-byte
# index.html; DIR must be readable by nginx's worker).
twobox_nginx() {
	local dir=$1 name=$2 listen=$3
	mkdir -p "$dir/html" "$dir/tmp"
	head -c 2159 /dev/zero | tr '\0' x >"$dir/html/index.html"
	cat >"$dir/$name.conf" <<NGX
worker_processes 1;
pid $dir/$name.pid;
error_log $dir/$name-error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
	uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
	server { listen $listen; root $dir/html; }
}
NGX
}

# twobox_stop: what the sourcing script started, for its cleanup: the
# processes of its pids array, every nginx whose pid file is in $work,
# and its namespace ($netns, when set).
twobox_stop() {
	local p f
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for f in "$work"/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	if [ -n "$netns" ]; then twobox_remove "$netns"; fi
}
