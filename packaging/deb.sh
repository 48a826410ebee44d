#!/bin/sh
# deb.sh builds dist/edgebench_<version>_{armhf,arm64,amd64}.deb from the
# binaries that `make cross` leaves in dist/ (edgebench-linux-armv7, -arm64,
# -amd64). Run from anywhere; paths are taken from the repository root.
#
#   packaging/deb.sh              # all three; VERSION from git describe
#   VERSION=1.2.3 packaging/deb.sh amd64 arm64
#
# Environment: VERSION (default: git describe, leading v dropped, or
# 0.0.0+git.<sha>), DIST (default: dist). ARMHF_BIN (default: armv7) picks the
# binary for armhf: set it to armv6 for Raspberry Pi OS on a Pi Zero or Pi 1.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

DIST=${DIST:-dist}
if [ -z "${VERSION:-}" ]; then
	VERSION=$(git describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//') || true
	if [ -z "$VERSION" ]; then
		VERSION="0.0.0+git.$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	fi
fi
case "$VERSION" in
[0-9]*) ;;
*) echo "deb.sh: VERSION $VERSION must start with a digit" >&2; exit 2 ;;
esac

archs=${*:-armhf arm64 amd64}
for arch in $archs; do
	case "$arch" in
	armhf) bin=${ARMHF_BIN:-armv7} ;;
	arm64) bin=arm64 ;;
	amd64) bin=amd64 ;;
	*) echo "deb.sh: unknown architecture $arch (armhf, arm64, amd64)" >&2; exit 2 ;;
	esac
	if [ ! -f "$DIST/edgebench-linux-$bin" ]; then
		echo "deb.sh: $DIST/edgebench-linux-$bin missing: run make cross first" >&2
		exit 1
	fi
	ARCH=$arch BIN_ARCH=$bin VERSION=$VERSION DIST=$DIST \
		go tool nfpm package --config packaging/nfpm.yaml --packager deb --target "$DIST/"
done
