#!/usr/bin/env bash
# govulncheck against a pinned copy of the Go vulnerability database, read
# offline: no machine here reaches vuln.go.dev. The database is the module
# golang.org/x/vulndb at the version the Makefile gives (its data/osv
# folder holds one OSV file per report, which govulncheck reads as a
# database); the module proxy serves it and its hash is checked against
# the pinned one. Usage: scripts/vulncheck.sh MODULE@VERSION H1-SUM
set -euo pipefail
mod=${1:?usage: $0 MODULE@VERSION H1-SUM}
want=${2:?usage: $0 MODULE@VERSION H1-SUM}
go=${GO:-go}
info=$($go mod download -json "$mod")
dir=$(jq -r .Dir <<<"$info")
sum=$(jq -r .Sum <<<"$info")
if [ "$sum" != "$want" ]; then
	echo "vulncheck: $mod has sum $sum, want $want" >&2
	exit 1
fi
echo "govulncheck with the database of $mod ($($go version | cut -d' ' -f3))"
exec $go tool govulncheck -db "file://$dir/data/osv" ./...
