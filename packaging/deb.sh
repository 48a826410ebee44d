#!/bin/sh
# deb.sh builds dist/edgebench_<version>_{armhf,arm64,amd64}.deb and
# dist/edgebench-collector_<version>_{armhf,arm64,amd64}.deb from the
# binaries that `make cross` leaves in dist/ (edgebench-linux-armv7, -arm64,
# -amd64, and edgebench-collector-linux-armv7, -arm64, -amd64). Run from
# anywhere; paths are taken from the repository root.
#
#   packaging/deb.sh                    # all three; version from git describe
#   packaging/deb.sh 1.2.3              # all three, version 1.2.3 (make deb)
#   VERSION=1.2.3 packaging/deb.sh amd64 arm64
#
# A first argument that is not an architecture is the version; so is
# $VERSION; by default `git describe --tags`. The version is made a Debian
# one: a leading v is dropped, v1.2.3-4-gabc1234 becomes 1.2.3+4.gabc1234
# (after 1.2.3, not before), and one that does not start with digits and a dot (a bare
# commit id, "dev") becomes 0.0.0+git.<it>.
# DIST (default: dist) holds the binaries and receives the packages.
# ARMHF_BIN (default: armv7) picks the binary for armhf: set it to armv6 for
# Raspberry Pi OS on a Pi Zero or Pi 1.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

DIST=${DIST:-dist}
case "${1:-}" in
"" | armhf | arm64 | amd64) ;;
*) VERSION=$1; shift ;;
esac
if [ -z "${VERSION:-}" ]; then
	VERSION=$(git describe --tags --always --dirty 2>/dev/null) || VERSION=unknown
fi
VERSION=$(printf '%s\n' "$VERSION" | sed -E \
	-e 's/^v([0-9])/\1/' \
	-e 's/^([0-9]+\.[^-]*)-([0-9]+)-g([0-9a-f]+)/\1+\2.g\3/' \
	-e 's/-dirty$/.dirty/' \
	-e 's/[^A-Za-z0-9.+~-]/./g')
if ! printf '%s\n' "$VERSION" | grep -Eq '^[0-9]+\.'; then
	VERSION="0.0.0+git.$VERSION"
fi

# What nfpm packs besides the repository's files, in STAGE: per package a
# Debian changelog (one entry: this version, dated as the commit it is
# built from) and the manual pages of docs/man, gzipped as Debian wants
# them (gzip -9n: no name, no time stamp, the same bytes every build).
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
date=$(git log -1 --format=%cD 2>/dev/null) || date=
[ -n "$date" ] || date=$(LC_ALL=C date -R)
for p in edgebench edgebench-collector; do
	mkdir -p "$STAGE/$p/man"
	{
		printf '%s (%s) unstable; urgency=medium\n\n' "$p" "$VERSION"
		printf '  * Built from the edgebench repository at this version; its git\n'
		printf '    history is the detailed change log:\n'
		printf '    https://github.com/edgebench/edgebench/commits\n\n'
		printf ' -- edgebench developers <edgebench@users.noreply.github.com>  %s\n' "$date"
	} | gzip -9n >"$STAGE/$p/changelog.gz"
done
for f in docs/man/*.1; do
	case "$(basename "$f")" in
	edgebench-collector*) p=edgebench-collector ;;
	*) p=edgebench ;;
	esac
	gzip -9n <"$f" >"$STAGE/$p/man/$(basename "$f").gz"
done

archs=${*:-armhf arm64 amd64}
for arch in $archs; do
	case "$arch" in
	armhf) bin=${ARMHF_BIN:-armv7} ;;
	arm64) bin=arm64 ;;
	amd64) bin=amd64 ;;
	*) echo "deb.sh: unknown architecture $arch (armhf, arm64, amd64)" >&2; exit 2 ;;
	esac
	colbin=$bin
	[ "$arch" = armhf ] && colbin=armv7
	for f in "edgebench-linux-$bin" "edgebench-collector-linux-$colbin"; do
		if [ ! -f "$DIST/$f" ]; then
			echo "deb.sh: $DIST/$f missing: run make cross first" >&2
			exit 1
		fi
	done
	ARCH=$arch BIN_ARCH=$bin VERSION=$VERSION DIST=$DIST STAGE=$STAGE \
		go tool nfpm package --config packaging/nfpm.yaml --packager deb --target "$DIST/"
	ARCH=$arch BIN_ARCH=$colbin VERSION=$VERSION DIST=$DIST STAGE=$STAGE \
		go tool nfpm package --config packaging/nfpm-collector.yaml --packager deb --target "$DIST/"
done
