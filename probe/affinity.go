package probe

import (
	"bytes"
	"fmt"
	"strings"
)

// maxCPUs bounds the core IDs a cpuSet holds.
const maxCPUs = 1024

// cpuSet is a set of core IDs below maxCPUs.
type cpuSet [maxCPUs / 64]uint64

func (s *cpuSet) set(id int) { s[id/64] |= 1 << (id % 64) }

func (s *cpuSet) or(o *cpuSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

func (s *cpuSet) empty() bool { return *s == cpuSet{} }

// list returns the IDs in increasing order.
func (s *cpuSet) list() []int {
	var out []int
	for i, w := range s {
		for b := 0; w != 0; b++ {
			if w&1 != 0 {
				out = append(out, i*64+b)
			}
			w >>= 1
		}
	}
	return out
}

// parseCPUList parses a kernel CPU list ("0-3,6,8-9").
func parseCPUList(b []byte) (cpuSet, error) {
	var s cpuSet
	b = trimSpace(b)
	if len(b) == 0 {
		return s, fmt.Errorf("empty CPU list")
	}
	for len(b) > 0 {
		part := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			part, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		lo, hi := part, part
		if i := bytes.IndexByte(part, '-'); i >= 0 {
			lo, hi = part[:i], part[i+1:]
		}
		l, ok1 := parseUint(lo)
		h, ok2 := parseUint(hi)
		if !ok1 || !ok2 || l > h || h >= maxCPUs {
			return s, fmt.Errorf("bad CPU list %q", part)
		}
		for id := l; id <= h; id++ {
			s.set(int(id))
		}
	}
	return s, nil
}

// parseCpusAllowed finds Cpus_allowed_list in /proc/PID/status.
func parseCpusAllowed(b []byte) (cpuSet, error) {
	const key = "Cpus_allowed_list:"
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if bytes.HasPrefix(line, []byte(key)) {
			return parseCPUList(line[len(key):])
		}
	}
	return cpuSet{}, fmt.Errorf("status: no Cpus_allowed_list")
}

// readCPUs reads the cores process pid may run on; ok false when unknown.
func (p *Probe) readCPUs(pid int) (cpuSet, bool) {
	b, err := p.r.read(pidRel(pid, "status"), false)
	if err != nil {
		return cpuSet{}, false
	}
	s, err := parseCpusAllowed(b)
	return s, err == nil && !s.empty()
}

// linkInfo is what sysfs says of an interface's link: its speed in Mb/s
// (0 unknown) and its duplex ("full", "half"; "" unknown).
type linkInfo struct {
	speed  int
	duplex string
}

// link is an interface's speed and duplex, read from
// sys/class/net/NAME/speed and duplex the first time the interface is
// seen: they do not change during a run. A speed of 0 is unknown: the file
// is absent (no sysfs), cannot be read (loopback and virtual links fail
// with EINVAL, as does a link that is down) or says -1; a duplex other
// than full or half (unknown, or no file) is "".
func (p *Probe) link(name string) linkInfo {
	if v, ok := p.links[name]; ok {
		return v
	}
	var v linkInfo
	if name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/') {
		if b, err := p.r.read("sys/class/net/"+name+"/speed", false); err == nil {
			if x, ok := parseUint(trimSpace(b)); ok && x > 0 && x < 1<<31 {
				v.speed = int(x)
			}
		}
		if b, err := p.r.read("sys/class/net/"+name+"/duplex", false); err == nil {
			switch d := string(trimSpace(b)); d {
			case "full", "half":
				v.duplex = d
			}
		}
	}
	if p.links == nil {
		p.links = map[string]linkInfo{}
	}
	if len(p.links) < 4096 {
		p.links[name] = v
	}
	return v
}
