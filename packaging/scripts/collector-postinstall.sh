#!/bin/sh
# edgebench-collector postinstall: the system user, then systemd learns the
# unit. The service is enabled, not started: edit
# /etc/edgebench/collector.env (and write the accounts file it names) first,
# then start the service by hand.
set -e

if ! getent passwd edgebench-collector >/dev/null 2>&1; then
	if command -v adduser >/dev/null 2>&1; then
		adduser --system --group --no-create-home --home /var/lib/edgebench-collector \
			--gecos "edgebench collector" edgebench-collector >/dev/null
	else
		getent group edgebench-collector >/dev/null 2>&1 || groupadd --system edgebench-collector
		useradd --system --gid edgebench-collector --no-create-home --home-dir /var/lib/edgebench-collector \
			--shell /usr/sbin/nologin --comment "edgebench collector" edgebench-collector
	fi
fi

if [ -f /etc/edgebench/collector.env ]; then
	chown root:edgebench-collector /etc/edgebench/collector.env
	chmod 0640 /etc/edgebench/collector.env
fi

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
	systemctl enable edgebench-collector.service || true
fi
exit 0
