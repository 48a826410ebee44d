#!/bin/sh
# edgebench-collector preremove: stop and disable the service. The user,
# the settings and /var/lib/edgebench-collector (the SQLite store) are kept
# (an upgrade reinstalls right after).
set -e

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl stop edgebench-collector.service || true
	systemctl disable edgebench-collector.service || true
fi
exit 0
