package probe

import (
	"os"
	"testing"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"
)

// BenchmarkSample is one full sample of the live machine: what the probe
// costs every second.
func BenchmarkSample(b *testing.B) {
	p := New("/")
	defer p.Close()
	p.Sample()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Sample(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSampleWatch adds one watched process (by PID) and one by name,
// as a run does.
func BenchmarkSampleWatch(b *testing.B) {
	p := New("/")
	defer p.Close()
	p.SetWatches([]Watch{{PID: os.Getpid()}, {Name: "systemd"}})
	p.Sample()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Sample(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGopsutilSample reads the same figures through gopsutil: CPU
// times overall and per core, load, memory, disks, interfaces, and one
// process's times, RSS and IO. It derives no rates, so it is a lower bound
// on what a gopsutil sampler would cost.
func BenchmarkGopsutilSample(b *testing.B) {
	proc, err := process.NewProcess(int32(os.Getpid()))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cpu.Times(false); err != nil {
			b.Fatal(err)
		}
		cpu.Times(true)
		load.Avg()
		load.Misc()
		mem.VirtualMemory()
		disk.IOCounters()
		net.IOCounters(true)
		proc.Times()
		proc.MemoryInfo()
		proc.IOCounters()
	}
}

// BenchmarkNameScan is one scan of /proc for a watched name (done every
// rescanEvery samples), against gopsutil's process list and names.
func BenchmarkNameScan(b *testing.B) {
	p := New("/")
	defer p.Close()
	ws := newWatchState(Watch{Name: "systemd"})
	b.ReportAllocs()
	for b.Loop() {
		ws.scan(p)
		clear(ws.pids)
		ws.rejected = nil // a first scan: every comm read
	}
}

// BenchmarkNameRescan is a later scan: only new PIDs are read.
func BenchmarkNameRescan(b *testing.B) {
	p := New("/")
	defer p.Close()
	ws := newWatchState(Watch{Name: "systemd"})
	ws.scan(p)
	b.ReportAllocs()
	for b.Loop() {
		ws.scan(p)
		ws.scans = 1 // never due for a recheck
	}
}

// BenchmarkTreeScan is the first scan of a server's tree (the default
// watch): every process's parent read once.
func BenchmarkTreeScan(b *testing.B) {
	p := New("/")
	defer p.Close()
	ws := newWatchState(Watch{PID: 1, Tree: true})
	b.ReportAllocs()
	for b.Loop() {
		ws.scan(p)
		clear(ws.pids)
		ws.pids[1] = newPidState(1)
		ws.rejected = nil
	}
}

// BenchmarkTreeRescan is a later scan of a tree: only new PIDs are read.
func BenchmarkTreeRescan(b *testing.B) {
	p := New("/")
	defer p.Close()
	ws := newWatchState(Watch{PID: os.Getpid(), Tree: true})
	ws.scan(p)
	b.ReportAllocs()
	for b.Loop() {
		ws.scan(p)
		ws.scans = 1
	}
}

func BenchmarkGopsutilNameScan(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ps, err := process.Processes()
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range ps {
			p.Name()
		}
	}
}

func BenchmarkParseStat(b *testing.B) {
	data, err := os.ReadFile("testdata/amd64/t1/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	var s statSnap
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := parseStat(data, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// The parsers and the per-sample bookkeeping allocate nothing of their own;
// the Sample and its slices are the only allocations.
func TestSampleAllocs(t *testing.T) {
	p := New("testdata/pi4/t1")
	defer p.Close()
	p.Sample()
	p.Sample()
	// Sample, arena (2), CPU, per-core slice, load, memory, disks, nets,
	// temps, freq, throttle: 12, and the closure that collects errors.
	if n := testing.AllocsPerRun(20, func() { p.Sample() }); n > 14 {
		t.Errorf("%.0f allocations per sample", n)
	}
	// A watch by PID adds the procs slice and nothing per process.
	p.SetWatches([]Watch{{PID: 813}})
	p.Sample()
	if n := testing.AllocsPerRun(20, func() { p.Sample() }); n > 15 {
		t.Errorf("%.0f allocations per sample with a watch", n)
	}
	var st statSnap
	data, _ := os.ReadFile("testdata/pi4/t1/proc/stat")
	parseStat(data, &st)
	if a := testing.AllocsPerRun(20, func() { parseStat(data, &st) }); a != 0 {
		t.Errorf("parseStat allocates %.0f times", a)
	}
	pd, _ := os.ReadFile("testdata/pi4/t1/proc/813/stat")
	if a := testing.AllocsPerRun(20, func() { parsePidStat(pd) }); a != 0 {
		t.Errorf("parsePidStat allocates %.0f times", a)
	}
	md, _ := os.ReadFile("testdata/pi4/t1/proc/meminfo")
	if a := testing.AllocsPerRun(20, func() { parseMeminfo(md) }); a != 0 {
		t.Errorf("parseMeminfo allocates %.0f times", a)
	}
}

// BenchmarkUpstreamLookup is what looking for a server's upstreams costs
// on this machine, part by part: the kernel's tables of TCP sockets
// (listening and established) and of connected unix stream sockets, every
// process's CPU ticks (kept at the run's first samples), and the walk of
// every process's fd folder for the peers' owners. Each runs at each of a
// run's first samples until an upstream is found, then once every 10
// samples; compare with BenchmarkSample, every second.
func BenchmarkUpstreamLookup(b *testing.B) {
	p := New("/")
	defer p.Close()
	b.Run("tcp-all", func(b *testing.B) {
		for b.Loop() {
			if _, err := tcpSockets(1<<tcpListen|1<<tcpEstablished, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a look asks: the listeners, then the connections to the ports
	// the server does not listen on.
	b.Run("tcp-filtered", func(b *testing.B) {
		for b.Loop() {
			l, err := tcpSockets(1<<tcpListen, nil)
			if err != nil {
				b.Fatal(err)
			}
			if ports := otherPorts(l, nil); len(ports) > 0 && len(ports) <= maxFilterPorts {
				if _, err := tcpSockets(1<<tcpEstablished, ports); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("unix", func(b *testing.B) {
		for b.Loop() {
			if _, err := unixStreams(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ticks", func(b *testing.B) {
		for b.Loop() {
			p.allTicks()
		}
	})
	b.Run("holders", func(b *testing.B) {
		for b.Loop() {
			socketHolders("/", map[uint64]bool{1: true}, 0, func(int) bool { return false })
		}
	})
}
