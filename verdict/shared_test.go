package verdict

import (
	"strings"
	"testing"

	"github.com/edgebench/edgebench/probe/machine"
)

// openAt is an open-loop run at rate that delivered it, latency us each.
func openAt(rate float64, us int64) Input {
	l := load(int64(rate*10), us)
	l.Rate = rate
	return Input{Load: l}
}

// Issue 28 item 4: a capacity trial on a box whose cores other processes
// held counts as the generator's limit (its sends leave late, its latency
// from the scheduled send is the machine's), as the run verdict says:
// the search then answers "at least", never a capacity confirmed.
func TestGeneratorSharedItsCores(t *testing.T) {
	// The cores busy % busy with nginx at 3 % and edgebench at 5 %:
	// other processes had the rest.
	busy := func(busy float64) *machine.Report {
		r := sys(busy, 3, 5)
		r.Summary.Procs[0].Role, r.Summary.Procs[1].Role = machine.RoleServer, machine.RoleGenerator
		return r
	}
	for _, c := range []struct {
		name  string
		in    func() Input
		bound bool
	}{
		{"open loop, other processes hold the cores", func() Input { in := openAt(100, 3000); in.System = busy(100); return in }, true},
		{"at the thresholds: 95 % busy, other processes 50 % of one core", func() Input {
			in := openAt(100, 3000)
			in.System = busy(95)
			in.System.Summary.Procs[0].CPU = pstat(135) // 190 - 135 - 5 = 50
			return in
		}, true},
		{"94.9 % busy", func() Input { in := openAt(100, 3000); in.System = busy(94.9); return in }, false},
		{"other processes 49 % of one core", func() Input {
			in := openAt(100, 3000)
			in.System = busy(100)
			in.System.Summary.Procs[0].CPU = pstat(146) // 200 - 146 - 5 = 49
			return in
		}, false},
		{"closed loop: the cpu verdict, not the generator's", func() Input {
			in := openAt(100, 3000)
			in.Load.Rate = 0
			in.System = busy(100)
			return in
		}, false},
		{"the server not seen on loopback: it may be the other processes", func() Input {
			in := openAt(100, 3000)
			in.System = busy(100)
			in.System.Summary.Procs[0].CPU = nil
			return in
		}, false},
		{"the server elsewhere, nothing listening here", func() Input {
			in := openAt(100, 3000)
			in.Load.Target.Host = "192.168.2.10"
			in.System = busy(100)
			in.System.Summary.Procs = in.System.Summary.Procs[1:]
			return in
		}, true},
	} {
		in := c.in()
		gb, why := GeneratorBound(in)
		v := Judge(in)
		if gb != c.bound || v.GeneratorBound() != c.bound {
			t.Errorf("%s: generator-bound %v (%q), verdict %s; want %v", c.name, gb, why, v.Line(), c.bound)
			continue
		}
		if c.bound && (v.Valid || !strings.Contains(why, "edgebench shared the cores with other processes") || !strings.Contains(why, "at least this")) {
			t.Errorf("%s: %s", c.name, v.Line())
		}
	}
	// The figures it states are the judgement's.
	in := openAt(100, 3000)
	in.System = busy(100)
	_, why := GeneratorBound(in)
	if want := "(100 % busy, other processes 192 % of one core)"; !strings.Contains(why, want) {
		t.Errorf("reason %q, want %q", why, want)
	}
}
