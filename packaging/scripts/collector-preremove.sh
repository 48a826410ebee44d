#!/bin/sh
# edgebench-collector preremove: stop the service on removal (an upgrade
# leaves it running, and postinst restarts it on the new binary). The
# user, the settings and /var/lib/edgebench-collector (the SQLite store)
# are kept until purge.
set -e

if [ -z "${DPKG_ROOT:-}" ] && [ "$1" = remove ] && [ -d /run/systemd/system ] && command -v deb-systemd-invoke >/dev/null 2>&1; then
	deb-systemd-invoke stop edgebench-collector.service >/dev/null || true
fi
exit 0
