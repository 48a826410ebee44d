#!/bin/sh
# edgebench-collector postremove: on removal the unit is masked
# (deb-systemd-helper keeps it from starting while the binary is gone); on
# purge its state is forgotten and the system user and group go. The
# store is results that cannot be measured again: a
# /var/lib/edgebench-collector that holds files is kept, owned by root,
# and a line says so; an empty one goes.
set -e

if [ "$1" = remove ] && command -v deb-systemd-helper >/dev/null 2>&1; then
	deb-systemd-helper mask edgebench-collector.service >/dev/null || true
fi
if [ "$1" = purge ]; then
	if command -v deb-systemd-helper >/dev/null 2>&1; then
		deb-systemd-helper purge edgebench-collector.service >/dev/null || true
		deb-systemd-helper unmask edgebench-collector.service >/dev/null || true
	fi
	if getent passwd edgebench-collector >/dev/null 2>&1 && command -v deluser >/dev/null 2>&1; then
		deluser --quiet --system edgebench-collector >/dev/null 2>&1 || true
	fi
	if getent group edgebench-collector >/dev/null 2>&1 && command -v delgroup >/dev/null 2>&1; then
		delgroup --quiet --system edgebench-collector >/dev/null 2>&1 || true
	fi
	# After the user is gone (no process of it left to race): root takes
	# over the folder and what is in it (the store's files: no folders),
	# symlinks not followed.
	dir=/var/lib/edgebench-collector
	if [ -d "$dir" ]; then
		if [ -n "$(ls -A "$dir")" ]; then
			chown root:root "$dir"
			for f in "$dir"/* "$dir"/.[!.]*; do
				[ -e "$f" ] || [ -L "$f" ] || continue
				chown -h root:root "$f"
			done
			echo "edgebench-collector: kept $dir (the store), now owned by root: remove it by hand if it is not wanted"
		else
			rmdir "$dir"
		fi
	fi
	rmdir /etc/edgebench 2>/dev/null || true
fi
exit 0
