package probe

import (
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// memSnap holds the /proc/meminfo lines the probe uses, in bytes; has marks
// the lines that were present.
type memSnap struct {
	total, free, available, buffers, cached, sreclaimable, dirty, swapTotal, swapFree uint64
	has                                                                               memHas
}

type memHas uint16

const (
	hasMemTotal memHas = 1 << iota
	hasMemFree
	hasMemAvailable
	hasBuffers
	hasCached
	hasSReclaimable
	hasDirty
	hasSwapTotal
	hasSwapFree
)

// parseMeminfo parses /proc/meminfo ("MemTotal:  3884356 kB").
func parseMeminfo(b []byte) (memSnap, error) {
	var m memSnap
	var f [3][]byte
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		fs := splitFields(line, f[:0])
		if len(fs) < 2 {
			continue
		}
		key := fs[0]
		if len(key) < 2 || key[len(key)-1] != ':' {
			continue
		}
		key = key[:len(key)-1]
		var dst *uint64
		var bit memHas
		switch string(key) {
		case "MemTotal":
			dst, bit = &m.total, hasMemTotal
		case "MemFree":
			dst, bit = &m.free, hasMemFree
		case "MemAvailable":
			dst, bit = &m.available, hasMemAvailable
		case "Buffers":
			dst, bit = &m.buffers, hasBuffers
		case "Cached":
			dst, bit = &m.cached, hasCached
		case "SReclaimable":
			dst, bit = &m.sreclaimable, hasSReclaimable
		case "Dirty":
			dst, bit = &m.dirty, hasDirty
		case "SwapTotal":
			dst, bit = &m.swapTotal, hasSwapTotal
		case "SwapFree":
			dst, bit = &m.swapFree, hasSwapFree
		default:
			continue
		}
		v, ok := parseUint(fs[1])
		if !ok {
			return memSnap{}, fmt.Errorf("meminfo: bad value %q for %s", fs[1], key)
		}
		mult := uint64(1)
		if len(fs) > 2 && string(fs[2]) == "kB" {
			mult = 1024
		}
		if v > (1<<64-1)/mult {
			return memSnap{}, fmt.Errorf("meminfo: %s overflows", key)
		}
		*dst = v * mult
		m.has |= bit
	}
	if m.has&hasMemTotal == 0 || m.has&hasMemFree == 0 {
		return memSnap{}, fmt.Errorf("meminfo: no MemTotal or MemFree")
	}
	return m, nil
}

// memory turns a snapshot into the sample's figures. Used is what free(1)
// of procps 3.3 calls used: total - free - buffers - cached - SReclaimable.
func (m *memSnap) memory(a *arena) *machine.Memory {
	out := &machine.Memory{Total: m.total, Free: m.free}
	used := m.total
	for _, x := range []uint64{m.free, m.buffers, m.cached, m.sreclaimable} {
		if x > used {
			used = 0
			break
		}
		used -= x
	}
	out.Used = used
	if m.has&hasMemAvailable != 0 {
		out.Available = a.u(m.available)
	}
	if m.has&hasBuffers != 0 {
		out.Buffers = a.u(m.buffers)
	}
	if m.has&hasCached != 0 {
		out.Cached = a.u(m.cached)
	}
	if m.has&hasDirty != 0 {
		out.Dirty = a.u(m.dirty)
	}
	if m.has&hasSwapTotal != 0 && m.has&hasSwapFree != 0 {
		out.SwapTotal = a.u(m.swapTotal)
		out.SwapUsed = a.u(m.swapTotal - min(m.swapFree, m.swapTotal))
	}
	return out
}
