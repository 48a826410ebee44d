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
	rxErrs, rxDrop  uint64
	txErrs, txDrop  uint64
}

// netDevCols are the columns of /proc/net/dev the probe reads, after the
// interface's name: received bytes, packets, errors and drops, then sent
// bytes, packets, errors and drops.
var netDevCols = [8]int{0, 1, 2, 3, 8, 9, 10, 11}

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
		if len(name) == 0 || len(fs) < 12 {
			return fmt.Errorf("net/dev: bad line %q", line)
		}
		var v [8]uint64
		for i, col := range netDevCols {
			x, ok := parseUint(fs[col])
			if !ok {
				return fmt.Errorf("net/dev: bad value %q for %s", fs[col], name)
			}
			v[i] = x
		}
		if v[1] == 0 && v[5] == 0 {
			continue
		}
		fn(name, netCounters{rxBytes: v[0], rxPkts: v[1], rxErrs: v[2], rxDrop: v[3],
			txBytes: v[4], txPkts: v[5], txErrs: v[6], txDrop: v[7]})
	}
	return nil
}

// netRates derives a Net from two snapshots dt seconds apart.
func netRates(prev, cur *netCounters, dt float64) (machine.Net, bool) {
	if cur.rxBytes < prev.rxBytes || cur.txBytes < prev.txBytes || cur.rxPkts < prev.rxPkts || cur.txPkts < prev.txPkts ||
		cur.rxErrs < prev.rxErrs || cur.rxDrop < prev.rxDrop || cur.txErrs < prev.txErrs || cur.txDrop < prev.txDrop {
		return machine.Net{}, false // counters reset (interface re-created) or wrapped
	}
	rate := func(a, b uint64) float64 { return float64(b-a) / dt }
	return machine.Net{
		Name:    cur.name,
		RxBps:   rate(prev.rxBytes, cur.rxBytes),
		TxBps:   rate(prev.txBytes, cur.txBytes),
		RxPps:   rate(prev.rxPkts, cur.rxPkts),
		TxPps:   rate(prev.txPkts, cur.txPkts),
		RxDrops: rate(prev.rxDrop, cur.rxDrop),
		TxDrops: rate(prev.txDrop, cur.txDrop),
		RxErrs:  rate(prev.rxErrs, cur.rxErrs),
		TxErrs:  rate(prev.txErrs, cur.txErrs),
	}, true
}
