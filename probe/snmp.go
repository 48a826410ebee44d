package probe

import (
	"bytes"
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// snmpRel is the kernel's SNMP counters of the reader's network namespace.
const snmpRel = "proc/net/snmp"

// tcpCounters are the TCP segment counters of /proc/net/snmp.
type tcpCounters struct {
	inSegs, outSegs, retransSegs uint64
}

// parseSNMP finds the TCP segment counters in /proc/net/snmp: a "Tcp:" line
// of names followed by a "Tcp:" line of values. InSegs, OutSegs and
// RetransSegs must all be there (the kernel has had them since 2.6).
func parseSNMP(b []byte) (tcpCounters, error) {
	var names, vals [32][]byte
	var c tcpCounters
	prefix := []byte("Tcp:")
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if !bytes.HasPrefix(line, prefix) {
			continue
		}
		vline, _ := nextLine(b)
		if !bytes.HasPrefix(vline, prefix) {
			return c, fmt.Errorf("net/snmp: Tcp: names without values")
		}
		ns := splitFields(line[len(prefix):], names[:0])
		vs := splitFields(vline[len(prefix):], vals[:0])
		if len(ns) != len(vs) {
			return c, fmt.Errorf("net/snmp: %d Tcp names for %d values", len(ns), len(vs))
		}
		var found int
		for i, n := range ns {
			var dst *uint64
			switch string(n) {
			case "InSegs":
				dst = &c.inSegs
			case "OutSegs":
				dst = &c.outSegs
			case "RetransSegs":
				dst = &c.retransSegs
			default:
				continue
			}
			v, ok := parseUint(vs[i])
			if !ok {
				return c, fmt.Errorf("net/snmp: bad value %q for Tcp %s", vs[i], n)
			}
			*dst = v
			found++
		}
		if found != 3 {
			return c, fmt.Errorf("net/snmp: Tcp without InSegs, OutSegs and RetransSegs")
		}
		return c, nil
	}
	return c, fmt.Errorf("net/snmp: no Tcp lines")
}

// tcpRates derives the segment rates between two snapshots dt seconds
// apart; false when a counter went back (a wrap, or another namespace).
func tcpRates(prev, cur *tcpCounters, dt float64) (machine.TCP, bool) {
	if cur.inSegs < prev.inSegs || cur.outSegs < prev.outSegs || cur.retransSegs < prev.retransSegs {
		return machine.TCP{}, false
	}
	return machine.TCP{
		InSegs:      float64(cur.inSegs-prev.inSegs) / dt,
		OutSegs:     float64(cur.outSegs-prev.outSegs) / dt,
		RetransSegs: float64(cur.retransSegs-prev.retransSegs) / dt,
	}, true
}
