package verdict

import (
	"strings"
	"testing"

	"github.com/edgebench/edgebench/probe/machine"
)

// The generator's rules when edgebench may run on every core of the
// machine (--cpus naming them all): the machine's rules, as when it is
// not pinned, not the rule on a generator pinned to some cores.
func TestGeneratorOnEveryCore(t *testing.T) {
	// Closed loop, pinned to both cores of a machine 99 % busy, nginx
	// 120 % and edgebench 60 % of its 200 %: the cores were shared by the
	// server and edgebench, and edgebench was not starved of cores it
	// alone may use.
	in := Input{Load: load(50000, 300), System: sys(99, 120, 60), GeneratorPID: 42, GeneratorCPUs: []int{0, 1}}
	v := Judge(in)
	if want := "the cores were 99 % busy, shared by the server and edgebench: nginx 120 %, edgebench 60 %, interrupts 0 %, other processes 18 % of 200 %"; v.LimitedBy != CPU || v.Reasons[0] != want {
		t.Errorf("closed loop on every core: %s %q\nwant %s %q", v.LimitedBy, v.Reasons, CPU, want)
	}
	if gb, why := GeneratorBound(in); gb {
		t.Errorf("closed loop on every core: generator-bound (%q)", why)
	}
	// The same machine, pinned to one of its cores: starved.
	in.GeneratorCPUs = []int{1}
	if v := Judge(in); v.LimitedBy != Generator || !strings.Contains(v.Reasons[0], "other processes starved it") {
		t.Errorf("closed loop on one core: %s %q", v.LimitedBy, v.Reasons)
	}

	// Open loop, pinned to both cores, other processes holding them: the
	// sends left late, as when edgebench is not pinned.
	busy := sys(100, 3, 5)
	busy.Summary.Procs[0].Role, busy.Summary.Procs[1].Role = machine.RoleServer, machine.RoleGenerator
	for _, cpus := range [][]int{nil, {0, 1}} {
		in := openAt(100, 3000)
		in.System, in.GeneratorCPUs = busy, cpus
		gb, why := GeneratorBound(in)
		if want := "edgebench shared the cores with other processes (100 % busy, other processes 192 % of one core)"; !gb || !strings.HasPrefix(why, want) {
			t.Errorf("open loop on cores %v: generator-bound %v %q, want %q", cpus, gb, why, want)
		}
		if v := Judge(in); v.LimitedBy != Generator || v.Valid {
			t.Errorf("open loop on cores %v: %s", cpus, v.Line())
		}
	}
}

// waiting is sys(busy, server, gen) whose cores also waited on IO for
// iowait %: idle is what is left of the two.
func waiting(busy, iowait, server, gen float64) *machine.Report {
	r := sys(busy, server, gen)
	r.Summary.CPU.Idle, r.Summary.CPU.IOWait = stat(100-busy-iowait), stat(iowait)
	return r
}

// A core waiting on IO is idle, not busy: 30 % busy and 68 % iowait is
// not a saturated machine (iowait is the disk's, judged by its own rule),
// on one machine and on a two-machine run's either side.
func TestIOWaitIsNotBusyCPU(t *testing.T) {
	v := Judge(Input{Load: load(50000, 300), System: waiting(30, 68, 30, 20), GeneratorPID: 42})
	if want := "nginx at 30 % CPU, 10 connections at 300us per request carry at most 33333.3 req/s; no resource saturated: more connections (-c) or a faster server"; v.LimitedBy != Connections || v.Reasons[0] != want {
		t.Errorf("one machine, 68 %% iowait: %s %q\nwant %s %q", v.LimitedBy, v.Reasons, Connections, want)
	}
	// Iowait on top of saturated cores leaves them saturated.
	if v := Judge(Input{Load: load(50000, 300), System: waiting(96, 3, 120, 60), GeneratorPID: 42}); v.LimitedBy != CPU || !strings.HasPrefix(v.Reasons[0], "the cores were 96 % busy") {
		t.Errorf("one machine, 96 %% busy and 3 %% iowait: %s %q", v.LimitedBy, v.Reasons)
	}

	target := pi(30, 40, 4000)
	target.Summary.CPU.Idle, target.Summary.CPU.IOWait = stat(2), stat(68)
	loader := laptop(30, 30, 0.3, 0.35)
	loader.Summary.CPU.Idle, loader.Summary.CPU.IOWait = stat(2), stat(68)
	v = JudgeTwo(two(flatLoad(steady(), 2000), loader, target))
	if v.LimitedBy == CPU || strings.Contains(strings.Join(v.Reasons, " | "), "cores were") {
		t.Errorf("two machines, 68 %% iowait on each: %s %q", v.LimitedBy, v.Reasons)
	}
	for _, side := range []string{"loader", "target"} {
		target, loader := pi(30, 40, 4000), laptop(30, 30, 0.3, 0.35)
		r := target
		if side == "loader" {
			r = loader
		}
		r.Summary.CPU.Idle, r.Summary.CPU.IOWait = stat(2), stat(3)
		r.Summary.CPU.User = stat(95)
		for i := range r.Summary.PerCPUBusy {
			r.Summary.PerCPUBusy[i].Stat = stat(95)
		}
		v := JudgeTwo(two(flatLoad(steady(), 2000), loader, target))
		if v.LimitedBy != CPU || !strings.Contains(v.Reasons[0], "the "+side+"'s cores were 95 % busy") {
			t.Errorf("two machines, the %s 95 %% busy and 3 %% iowait: %s %q", side, v.LimitedBy, v.Reasons)
		}
	}
}

// memory is sys(40, 30, 30) with memory pressure psi % (none when
// negative) and avail ‰ of its 1000 MiB available, of which free ‰ free.
func memory(psi float64, avail, free uint64) *machine.Report {
	r := sys(40, 30, 30)
	if psi >= 0 {
		r.Summary.PSI = &machine.PSISummary{MemSome: pstat(psi), IOSome: pstat(0)}
	}
	const total = 1000 << 20
	r.Summary.Mem = &machine.MemSummary{Total: total, Available: pstat(float64(total * avail / 1000)),
		Free: stat(float64(total * free / 1000)), Used: stat(float64(total * (1000 - free) / 1000))}
	return r
}

// Each memory threshold against its own figure and at its own edge:
// pressure (PSI some) from 10 %, available memory below 5 % of the total
// (not the free memory: the page cache is available), on one machine and
// on a two-machine run's target.
func TestMemoryThresholds(t *testing.T) {
	for _, c := range []struct {
		name string
		sys  *machine.Report
		want string // the first reason when memory is the limit, "" when it is not
	}{
		{"pressure at 10 %", memory(10, 500, 20), "memory pressure 10 % (some tasks stalled on memory)"},
		{"pressure at 9.9 %", memory(9.9, 500, 20), ""},
		{"pressure at 6 %, above the available threshold", memory(6, 500, 20), ""},
		{"4.9 % available", memory(-1, 49, 10), "4.9 % of memory available"},
		{"5.0 % available", memory(-1, 50, 10), ""},
		{"9.0 % available, below the pressure threshold", memory(0, 90, 10), ""},
		{"half available, 1 % free (the rest page cache)", memory(0, 500, 10), ""},
		{"no pressure figure, half available", memory(-1, 500, 500), ""},
	} {
		v := Judge(Input{Load: load(5000, 300), System: c.sys, GeneratorPID: 42})
		if c.want == "" {
			if v.LimitedBy == Memory {
				t.Errorf("%s: %s %q", c.name, v.LimitedBy, v.Reasons)
			}
		} else if v.LimitedBy != Memory || v.Reasons[0] != c.want {
			t.Errorf("%s: %s %q, want %s %q", c.name, v.LimitedBy, v.Reasons, Memory, c.want)
		}

		target := pi(15, 40, 4000)
		target.Summary.PSI, target.Summary.Mem = c.sys.Summary.PSI, c.sys.Summary.Mem
		v = JudgeTwo(two(flatLoad(steady(), 2000), laptop(20, 30, 0.3, 0.35), target))
		switch {
		case c.want == "" && v.LimitedBy == Memory:
			t.Errorf("%s on the target: %s %q", c.name, v.LimitedBy, v.Reasons)
		case c.want != "" && (v.LimitedBy != Memory || !strings.Contains(v.Reasons[0], "the target")):
			t.Errorf("%s on the target: %s %q", c.name, v.LimitedBy, v.Reasons)
		}
	}
}
