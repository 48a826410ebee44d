#!/bin/sh
# edgebench postinstall: the system user (its home, /var/lib/edgebench, is
# the service's state folder), then the unit is enabled, as debhelper's
# dh_installsystemd does it, through deb-systemd-helper (an admin's
# disable survives upgrades). The service is not started: edit
# /etc/edgebench/agent.yaml first, then start it by hand.
set -e

if [ "$1" = configure ]; then
	if ! getent passwd edgebench >/dev/null 2>&1; then
		adduser --system --group --home /var/lib/edgebench --gecos "edgebench agent" edgebench >/dev/null
	fi
	# Shipped 0644 (a template, no secret yet); the settings it will hold
	# (the broker's password) are for root and the service alone.
	if [ -f /etc/edgebench/agent.yaml ]; then
		chown root:edgebench /etc/edgebench/agent.yaml
		chmod 0640 /etc/edgebench/agent.yaml
	fi
fi

if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
	if command -v deb-systemd-helper >/dev/null 2>&1; then
		# Only removes a mask deb-systemd-helper set on removal.
		deb-systemd-helper unmask edgebench.service >/dev/null || true
		# was-enabled is true on a first install: enable then.
		if deb-systemd-helper --quiet was-enabled edgebench.service; then
			deb-systemd-helper enable edgebench.service >/dev/null || true
		else
			deb-systemd-helper update-state edgebench.service >/dev/null || true
		fi
	fi
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		# An upgrade restarts a running service on the new binary; a first
		# install starts nothing.
		if [ -n "$2" ] && command -v deb-systemd-invoke >/dev/null 2>&1; then
			deb-systemd-invoke try-restart edgebench.service >/dev/null || true
		fi
	fi
fi
exit 0
