package probe

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// cpuTimes is one cpu line of /proc/stat in USER_HZ ticks: user, nice,
// system, idle, iowait, irq, softirq, steal (guest time is already counted
// in user and nice).
type cpuTimes struct {
	id int // -1 for the "cpu" total line
	v  [8]uint64
}

// statSnap is what the probe keeps of /proc/stat.
type statSnap struct {
	cpus              []cpuTimes // total first, then per core in file order
	ctxt, intr        uint64
	hasCtxt, hasIntr  bool
	running, blocked  uint64
	hasRun, hasBlockd bool
}

var errNoCPULine = errors.New("no cpu line")

// parseStat parses /proc/stat into s, reusing s's slices. Lines it does not
// need are skipped; the long intr line is read only up to its first number.
func parseStat(b []byte, s *statSnap) error {
	s.cpus = s.cpus[:0]
	s.hasCtxt, s.hasIntr, s.hasRun, s.hasBlockd = false, false, false, false
	var f [12][]byte
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		switch {
		case hasPrefix(line, "cpu"):
			fs := splitFields(line, f[:0])
			if len(fs) < 5 {
				return fmt.Errorf("stat: short cpu line %q", line)
			}
			c := cpuTimes{id: -1}
			if len(fs[0]) > 3 {
				id, ok := parseUint(fs[0][3:])
				if !ok || id > 1<<20 {
					return fmt.Errorf("stat: bad cpu name %q", fs[0])
				}
				c.id = int(id)
			} else if len(s.cpus) > 0 {
				return fmt.Errorf("stat: second total cpu line")
			}
			for i := 0; i < 8 && i+1 < len(fs); i++ {
				v, ok := parseUint(fs[i+1])
				if !ok {
					return fmt.Errorf("stat: bad value %q in %s", fs[i+1], fs[0])
				}
				c.v[i] = v
			}
			if c.id >= 0 && len(s.cpus) == 0 {
				return fmt.Errorf("stat: %s before the total cpu line", fs[0])
			}
			s.cpus = append(s.cpus, c)
		case hasPrefix(line, "ctxt "):
			s.ctxt, s.hasCtxt = parseUint(trimSpace(line[5:]))
		case hasPrefix(line, "intr "):
			// Only the total: the per-IRQ counts that follow can be
			// thousands of fields.
			rest := trimSpace(line[5:])
			if sp := bytes.IndexByte(rest, ' '); sp >= 0 {
				rest = rest[:sp]
			}
			s.intr, s.hasIntr = parseUint(rest)
		case hasPrefix(line, "procs_running "):
			s.running, s.hasRun = parseUint(trimSpace(line[14:]))
		case hasPrefix(line, "procs_blocked "):
			s.blocked, s.hasBlockd = parseUint(trimSpace(line[14:]))
		}
	}
	if len(s.cpus) == 0 {
		return errNoCPULine
	}
	return nil
}

// cpuShares returns the shares of each state in percent between two
// snapshots of one cpu line; ok is false when no tick passed (or the counters
// went backwards, as after a CPU went offline and came back).
func cpuShares(prev, cur *cpuTimes) (machine.CPU, bool) {
	var d [8]float64
	var total float64
	for i := range cur.v {
		if cur.v[i] < prev.v[i] {
			return machine.CPU{}, false
		}
		d[i] = float64(cur.v[i] - prev.v[i])
		total += d[i]
	}
	if total == 0 {
		return machine.CPU{}, false
	}
	k := 100 / total
	return machine.CPU{
		User: d[0] * k, Nice: d[1] * k, System: d[2] * k, Idle: d[3] * k,
		IOWait: d[4] * k, IRQ: d[5] * k, SoftIRQ: d[6] * k, Steal: d[7] * k,
	}, true
}
