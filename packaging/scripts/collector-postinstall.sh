#!/bin/sh
# edgebench-collector postinstall: the system user (its home,
# /var/lib/edgebench-collector, holds the SQLite store and a ~/.pgpass for
# PostgreSQL), then the unit is enabled, as debhelper's dh_installsystemd
# does it, through deb-systemd-helper (an admin's disable survives
# upgrades). The service is not started: edit
# /etc/edgebench-collector/collector.yaml (and write the accounts file it
# names) first, then start it by hand.
set -e

if [ "$1" = configure ]; then
	if ! getent passwd edgebench-collector >/dev/null 2>&1; then
		adduser --system --group --home /var/lib/edgebench-collector \
			--gecos "edgebench collector" edgebench-collector >/dev/null
	fi
	# Shipped 0644 (a template, no secret yet); the settings it will hold
	# (passwords, the API token) are for root and the service alone.
	for f in /etc/edgebench/collector.env /etc/edgebench-collector/collector.yaml; do
		if [ -f "$f" ]; then
			chown root:edgebench-collector "$f"
			chmod 0640 "$f"
		fi
	done
fi

if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
	if command -v deb-systemd-helper >/dev/null 2>&1; then
		# Only removes a mask deb-systemd-helper set on removal.
		deb-systemd-helper unmask edgebench-collector.service >/dev/null || true
		# was-enabled is true on a first install: enable then.
		if deb-systemd-helper --quiet was-enabled edgebench-collector.service; then
			deb-systemd-helper enable edgebench-collector.service >/dev/null || true
		else
			deb-systemd-helper update-state edgebench-collector.service >/dev/null || true
		fi
	fi
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		# An upgrade restarts a running service on the new binary; a first
		# install starts nothing.
		if [ -n "$2" ] && command -v deb-systemd-invoke >/dev/null 2>&1; then
			deb-systemd-invoke try-restart edgebench-collector.service >/dev/null || true
		fi
	fi
fi
exit 0
