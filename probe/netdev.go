package probe

import (
	"bytes"
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// netCounters is one interface line of /proc/net/dev.
type netCounters struct {
	name            string
	rxBytes, rxPkts uint64
	txBytes, txPkts uint64
}

// parseNetDev parses /proc/net/dev and calls fn for each interface that has
// moved any packet. The name passed to fn aliases b.
func parseNetDev(b []byte, fn func(name []byte, c netCounters)) error {
	var f [20][]byte
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		colon := bytes.IndexByte(line, ':')
		if colon < 0 || bytes.IndexByte(line, '|') >= 0 {
			continue // the two header lines
		}
		name := trimSpace(line[:colon])
		fs := splitFields(line[colon+1:], f[:0])
		if len(name) == 0 || len(fs) < 10 {
			return fmt.Errorf("net/dev: bad line %q", line)
		}
		var v [4]uint64
		for i, col := range [4]int{0, 1, 8, 9} {
			x, ok := parseUint(fs[col])
			if !ok {
				return fmt.Errorf("net/dev: bad value %q for %s", fs[col], name)
			}
			v[i] = x
		}
		if v[1] == 0 && v[3] == 0 {
			continue
		}
		fn(name, netCounters{rxBytes: v[0], rxPkts: v[1], txBytes: v[2], txPkts: v[3]})
	}
	return nil
}

// netRates derives a Net from two snapshots dt seconds apart.
func netRates(prev, cur *netCounters, dt float64) (machine.Net, bool) {
	if cur.rxBytes < prev.rxBytes || cur.txBytes < prev.txBytes || cur.rxPkts < prev.rxPkts || cur.txPkts < prev.txPkts {
		return machine.Net{}, false // counters reset (interface re-created) or wrapped
	}
	return machine.Net{
		Name:  cur.name,
		RxBps: float64(cur.rxBytes-prev.rxBytes) / dt,
		TxBps: float64(cur.txBytes-prev.txBytes) / dt,
		RxPps: float64(cur.rxPkts-prev.rxPkts) / dt,
		TxPps: float64(cur.txPkts-prev.txPkts) / dt,
	}, true
}
