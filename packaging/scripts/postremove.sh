#!/bin/sh
# edgebench postremove: on removal the unit is masked (deb-systemd-helper
# keeps it from starting while the binary is gone); on purge its state is
# forgotten, and the system user and group, the spool of unsent results
# (/var/lib/edgebench) and the settings folder go too.
set -e

if [ "$1" = remove ] && command -v deb-systemd-helper >/dev/null 2>&1; then
	deb-systemd-helper mask edgebench.service >/dev/null || true
fi
if [ "$1" = purge ]; then
	if command -v deb-systemd-helper >/dev/null 2>&1; then
		deb-systemd-helper purge edgebench.service >/dev/null || true
		deb-systemd-helper unmask edgebench.service >/dev/null || true
	fi
	rm -rf /var/lib/edgebench
	rmdir /etc/edgebench 2>/dev/null || true
	if getent passwd edgebench >/dev/null 2>&1 && command -v deluser >/dev/null 2>&1; then
		deluser --quiet --system edgebench >/dev/null 2>&1 || true
	fi
	if getent group edgebench >/dev/null 2>&1 && command -v delgroup >/dev/null 2>&1; then
		delgroup --quiet --system edgebench >/dev/null 2>&1 || true
	fi
fi
exit 0
