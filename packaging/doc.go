// Package packaging holds no code: its folder holds the Debian packaging of
// edgebench (the systemd unit, the default agent config, the nfpm config,
// the maintainer scripts and deb.sh), and its test builds a .deb and checks
// it with dpkg-deb and the unit with systemd-analyze.
package packaging
