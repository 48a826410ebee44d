package agent

// This file is the fleet's own boards as targets: policy.fleet_file lists
// their addresses, one per line, and a load test may target them on top
// of the allowlist. Only single unicast addresses are taken: a fleet file
// names boards, never networks, so it cannot open a device to any other
// host.

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"
)

// maxFleetBoards bounds the addresses a fleet file may list.
const maxFleetBoards = 4096

// fleetFile is policy.fleet_file, read at start and again when its size or
// modification time changes. Safe for concurrent use.
type fleetFile struct {
	path string

	mu    sync.Mutex
	addrs map[netip.Addr]bool
	size  int64
	mtime time.Time
	err   error // the last reload's, when it failed: the previous list stays
}

// openFleetFile reads the fleet file at path; an error names the line.
func openFleetFile(path string) (*fleetFile, error) {
	f := &fleetFile{path: path}
	if err := f.reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// reload reads the file if it changed since the last read.
func (f *fleetFile) reload() error {
	st, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("policy.fleet_file: %w", err)
	}
	if f.addrs != nil && st.Size() == f.size && st.ModTime().Equal(f.mtime) {
		return nil
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("policy.fleet_file: %w", err)
	}
	addrs, err := parseFleetFile(b)
	if err != nil {
		return fmt.Errorf("policy.fleet_file %s: %w", f.path, err)
	}
	f.addrs, f.size, f.mtime = addrs, st.Size(), st.ModTime()
	return nil
}

// parseFleetFile parses a fleet file: one address per line, blanks and
// # comments ignored. A prefix, a host name, a zone, an unspecified,
// multicast or broadcast address is refused: each line is one board.
func parseFleetFile(b []byte) (map[netip.Addr]bool, error) {
	out := map[netip.Addr]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		a, err := netip.ParseAddr(line)
		switch {
		case strings.Contains(line, "/"):
			return nil, fmt.Errorf("line %d: %q is a network: list each board's address", n, line)
		case err != nil:
			return nil, fmt.Errorf("line %d: %q is not an IP address", n, line)
		case a.Zone() != "":
			return nil, fmt.Errorf("line %d: %q: zones are not allowed", n, line)
		}
		a = a.Unmap()
		if a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
			return nil, fmt.Errorf("line %d: %s is not one board's address", n, a)
		}
		out[a] = true
		if len(out) > maxFleetBoards {
			return nil, fmt.Errorf("more than %d addresses", maxFleetBoards)
		}
	}
	return out, sc.Err()
}

// has reports whether a is one of the fleet's boards, reading the file
// again first if it changed. A file that became unreadable or bad keeps
// the list read last (err says why).
func (f *fleetFile) has(a netip.Addr) (bool, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = f.reload()
	return f.addrs[a.Unmap().WithZone("")], len(f.addrs), f.err
}
