package probe

import (
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// diskCounters is one line of /proc/diskstats.
type diskCounters struct {
	name                 string
	reads, readSectors   uint64
	writes, writeSectors uint64
	ioTicks              uint64 // ms spent doing I/O
}

// parseDiskstats parses /proc/diskstats and calls fn for each device that
// has done any I/O (loop and ram devices nobody uses stay silent). The name
// passed to fn aliases b.
func parseDiskstats(b []byte, fn func(name []byte, c diskCounters)) error {
	var f [24][]byte
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		fs := splitFields(line, f[:0])
		if len(fs) == 0 {
			continue
		}
		// major minor name, then at least 11 counters (kernels before 4.18
		// have 11, 4.18 adds 4 discard fields, 5.5 two flush fields).
		if len(fs) < 14 {
			return fmt.Errorf("diskstats: %d fields in %q", len(fs), line)
		}
		var v [11]uint64
		for i := range v {
			x, ok := parseUint(fs[3+i])
			if !ok {
				return fmt.Errorf("diskstats: bad value %q for %s", fs[3+i], fs[2])
			}
			v[i] = x
		}
		if v[0] == 0 && v[4] == 0 && v[9] == 0 {
			continue
		}
		fn(fs[2], diskCounters{reads: v[0], readSectors: v[2], writes: v[4], writeSectors: v[6], ioTicks: v[9]})
	}
	return nil
}

// isPartitionName guesses from names alone whether name is a partition of
// another device in names: sda1 of sda, mmcblk0p2 of mmcblk0, nvme0n1p1 of
// nvme0n1. It is the fallback when sys/class/block is not there to ask.
func isPartitionName(name string, others func(string) bool) bool {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i == 0 {
		return false
	}
	base := name[:i]
	if others(base) {
		return true
	}
	return base[len(base)-1] == 'p' && len(base) > 1 && others(base[:len(base)-1])
}

// diskRates derives a Disk from two snapshots dt seconds apart.
func diskRates(prev, cur *diskCounters, dt float64) (machine.Disk, bool) {
	if cur.reads < prev.reads || cur.writes < prev.writes || cur.readSectors < prev.readSectors ||
		cur.writeSectors < prev.writeSectors || cur.ioTicks < prev.ioTicks {
		return machine.Disk{}, false
	}
	busy := float64(cur.ioTicks-prev.ioTicks) / (dt * 1000) * 100
	return machine.Disk{
		Name:      cur.name,
		ReadBps:   float64(cur.readSectors-prev.readSectors) * 512 / dt,
		WriteBps:  float64(cur.writeSectors-prev.writeSectors) * 512 / dt,
		ReadIOPS:  float64(cur.reads-prev.reads) / dt,
		WriteIOPS: float64(cur.writes-prev.writes) / dt,
		Busy:      min(busy, 100),
	}, true
}
