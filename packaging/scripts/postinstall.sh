#!/bin/sh
# edgebench postinstall: the system user, then systemd learns the unit.
# The service is enabled, not started: edit /etc/edgebench/agent.yaml first,
# then start the service by hand.
set -e

if ! getent passwd edgebench >/dev/null 2>&1; then
	if command -v adduser >/dev/null 2>&1; then
		adduser --system --group --no-create-home --home /var/lib/edgebench \
			--gecos "edgebench agent" edgebench >/dev/null
	else
		getent group edgebench >/dev/null 2>&1 || groupadd --system edgebench
		useradd --system --gid edgebench --no-create-home --home-dir /var/lib/edgebench \
			--shell /usr/sbin/nologin --comment "edgebench agent" edgebench
	fi
fi

if [ -f /etc/edgebench/agent.yaml ]; then
	chown root:edgebench /etc/edgebench/agent.yaml
	chmod 0640 /etc/edgebench/agent.yaml
fi

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
	systemctl enable edgebench.service || true
fi
exit 0
