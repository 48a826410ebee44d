package probe

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds the fixture trees' copies of rel (both snapshots of both
// boards) and extra inputs to the seed corpus.
func addSeeds(f *testing.F, rel string, extra ...string) {
	matches, _ := filepath.Glob(filepath.Join("testdata", "*", "t*", rel))
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

func FuzzParseStat(f *testing.F) {
	addSeeds(f, "proc/stat", "cpu  1 2 3 4\n", "cpu 1 2 3 4 5 6 7 8 9 10 11 12\ncpu0 1 2 3 4 5 6 7 8\n", "intr\nctxt\ncpu")
	var prev statSnap
	f.Fuzz(func(t *testing.T, b []byte) {
		var s statSnap
		if err := parseStat(b, &s); err != nil {
			return
		}
		if len(s.cpus) == 0 || s.cpus[0].id != -1 {
			t.Fatalf("parsed without a total cpu line first: %+v", s.cpus)
		}
		for _, c := range s.cpus[1:] {
			if c.id < 0 {
				t.Fatalf("second total line accepted")
			}
		}
		if len(prev.cpus) > 0 {
			if c, ok := cpuShares(&prev.cpus[0], &s.cpus[0]); ok {
				sum := c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
				if math.Abs(sum-100) > 1e-6 || c.User < 0 {
					t.Fatalf("shares sum to %v: %+v", sum, c)
				}
			}
		}
		prev = s
		prev.cpus = append([]cpuTimes(nil), s.cpus...)
	})
}

func FuzzParseMeminfo(f *testing.F) {
	addSeeds(f, "proc/meminfo", "MemTotal: 1 kB\nMemFree: 2 kB\n", "MemTotal: 18446744073709551615 kB\nMemFree:\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeminfo(b)
		if err != nil {
			return
		}
		if m.has&hasMemTotal == 0 || m.has&hasMemFree == 0 {
			t.Fatal("accepted without MemTotal and MemFree")
		}
		out := m.memory(newArena(0, 0))
		if out.Used > out.Total {
			t.Fatalf("used %d > total %d", out.Used, out.Total)
		}
		if out.SwapUsed != nil && *out.SwapUsed > *out.SwapTotal {
			t.Fatalf("swap used %d > total %d", *out.SwapUsed, *out.SwapTotal)
		}
	})
}

func FuzzParseDiskstats(f *testing.F) {
	addSeeds(f, "proc/diskstats", "   8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		var prev *diskCounters
		_ = parseDiskstats(b, func(name []byte, c diskCounters) {
			if len(name) == 0 {
				t.Fatal("empty device name")
			}
			if prev != nil {
				if r, ok := diskRates(prev, &c, 1); ok && (r.Busy < 0 || r.Busy > 100 || r.ReadBps < 0) {
					t.Fatalf("rates %+v", r)
				}
			}
			prev = &c
		})
	})
}

func FuzzParseNetDev(f *testing.F) {
	addSeeds(f, "proc/net/dev", "eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = parseNetDev(b, func(name []byte, c netCounters) {
			if len(name) == 0 {
				t.Fatal("empty interface name")
			}
		})
	})
}

func FuzzParseSNMP(f *testing.F) {
	addSeeds(f, "proc/net/snmp", "Tcp: InSegs OutSegs RetransSegs\nTcp: 1 2 3\n", "Tcp: InSegs\nTcp:\n", "Tcp: a b c d\nTcp: 1 2 3\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseSNMP(b)
		if err != nil {
			return
		}
		if r, ok := tcpRates(&tcpCounters{}, &c, 1); !ok || r.OutSegs < 0 || r.RetransSegs < 0 || r.InSegs < 0 {
			t.Fatalf("rates %+v from %+v", r, c)
		}
	})
}

func FuzzParsePressure(f *testing.F) {
	addSeeds(f, "proc/pressure/io", "some avg10=0.00 total=1\n", "full total=\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePressure(b)
		if err == nil && !p.hasSome {
			t.Fatal("accepted without a some line")
		}
		if err == nil {
			if v, ok := stallPct(0, p.some, 1); ok && (v < 0 || v > 100) {
				t.Fatalf("stall %v", v)
			}
		}
	})
}

func FuzzParseLoadavg(f *testing.F) {
	addSeeds(f, "proc/loadavg", "1.5 2 3.25\n", ". . .")
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLoadavg(b)
		if err == nil && (l.Load1 < 0 || math.IsNaN(l.Load5)) {
			t.Fatalf("load %+v", l)
		}
	})
}

func FuzzParsePidStat(f *testing.F) {
	addSeeds(f, "proc/813/stat", "1 (a) b) S 1 1 1 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 1 -3\n", "1 ) ( S")
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := parsePidStat(b)
		if err == nil && len(ps.comm) > len(b) {
			t.Fatal("comm longer than the input")
		}
	})
}

func FuzzParsePidIO(f *testing.F) {
	addSeeds(f, "proc/813/io", "read_bytes: 1\nwrite_bytes: 2\n")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parsePidIO(b) })
}

func FuzzParseNetTCP(f *testing.F) {
	addSeeds(f, "proc/net/tcp")
	addSeeds(f, "proc/net/tcp6", "h\n 0: 0:FFFFF 0:0 0A 0 0 0 0 0 1\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = parseNetTCP(b, func(port int, inode uint64) {
			if port < 0 || port > 65535 || inode == 0 {
				t.Fatalf("port %d inode %d", port, inode)
			}
		})
	})
}

func FuzzParseThrottled(f *testing.F) {
	addSeeds(f, "sys/devices/platform/soc/soc:firmware/get_throttled", "0x0", "ffffffff", "-1")
	f.Fuzz(func(t *testing.T, b []byte) {
		th, err := parseThrottled(b)
		if err == nil && decodeThrottled(th.Raw) != th {
			t.Fatal("decode is not a function of Raw")
		}
	})
}
