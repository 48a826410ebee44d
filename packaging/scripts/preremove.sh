#!/bin/sh
# edgebench preremove: stop and disable the service. The user, the config
# and /var/lib/edgebench are kept (an upgrade reinstalls right after).
set -e

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl stop edgebench.service || true
	systemctl disable edgebench.service || true
fi
exit 0
