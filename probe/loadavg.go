package probe

import (
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// parseLoadavg parses /proc/loadavg ("0.52 0.58 0.59 1/245 12345").
func parseLoadavg(b []byte) (machine.Load, error) {
	var f [5][]byte
	fs := splitFields(trimSpace(b), f[:0])
	if len(fs) < 3 {
		return machine.Load{}, fmt.Errorf("loadavg: %d fields", len(fs))
	}
	var l machine.Load
	var ok [3]bool
	l.Load1, ok[0] = parseFixed(fs[0])
	l.Load5, ok[1] = parseFixed(fs[1])
	l.Load15, ok[2] = parseFixed(fs[2])
	if !ok[0] || !ok[1] || !ok[2] {
		return machine.Load{}, fmt.Errorf("loadavg: bad value in %q", b)
	}
	return l, nil
}
