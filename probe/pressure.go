package probe

import "fmt"

// psiTotals is one /proc/pressure file: the cumulative stall times in µs.
type psiTotals struct {
	some, full       uint64
	hasSome, hasFull bool
}

// parsePressure parses a /proc/pressure/{cpu,io,memory} file:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=5944499
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=4685430
func parsePressure(b []byte) (psiTotals, error) {
	var p psiTotals
	var f [6][]byte
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		fs := splitFields(line, f[:0])
		if len(fs) == 0 {
			continue
		}
		var total []byte
		for _, x := range fs[1:] {
			if hasPrefix(x, "total=") {
				total = x[6:]
			}
		}
		if total == nil {
			return psiTotals{}, fmt.Errorf("pressure: no total in %q", line)
		}
		v, ok := parseUint(total)
		if !ok {
			return psiTotals{}, fmt.Errorf("pressure: bad total %q", total)
		}
		switch string(fs[0]) {
		case "some":
			p.some, p.hasSome = v, true
		case "full":
			p.full, p.hasFull = v, true
		}
	}
	if !p.hasSome {
		return psiTotals{}, fmt.Errorf("pressure: no some line")
	}
	return p, nil
}

// stallPct is the share of dt seconds spent stalled between two totals.
func stallPct(prev, cur uint64, dt float64) (float64, bool) {
	if cur < prev {
		return 0, false
	}
	return min(float64(cur-prev)/(dt*1e6)*100, 100), true
}
