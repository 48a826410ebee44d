package verdict

import (
	"strings"
	"testing"

	"github.com/edgebench/edgebench/loadgen/report"
)

// Issue 28 item 5: ab -c5000 -n50000 -k on a busy box, edgebench's
// slowest connects at 3.3 s, and the verdict said valid and suggested
// more connections. Connects at TCP's SYN retry marks (1 s, 3 s) while
// the typical one takes microseconds are SYNs a full listen backlog
// dropped: the verdict names the backlog, the run is not valid, and
// more connections are never the advice.
func TestConnectsAtTheSYNRetryMarks(t *testing.T) {
	withConnects := func(fast, at1s, at3s int64) *report.LoadResult {
		l := load(50000, 2000)
		l.Target, _ = report.ParseTarget("http://127.0.0.1/")
		l.Connections = 5000
		l.Connect = report.NewLatencyHistogram()
		for range 50000 - fast - at1s - at3s {
			l.Connect.Record(0) // a reused connection
		}
		for range fast {
			l.Connect.Record(300)
		}
		for range at1s {
			l.Connect.Record(1_030_000)
		}
		for range at3s {
			l.Connect.Record(3_300_000)
		}
		return l
	}
	quiet := sys(40, 30, 20)
	for _, tc := range []struct {
		name  string
		in    Input
		by    string
		valid bool
		says  string
	}{
		{"backlog overflowed, probe", Input{Load: withConnects(4700, 250, 50), System: quiet, GeneratorPID: 42}, Server, false,
			"300 of 5000 connects took 1 s or more (slowest 3.30s), TCP's times to send a dropped SYN again (1 s, 3 s): the server's listen backlog overflowed (a loopback connect"},
		{"backlog overflowed, no probe", Input{Load: withConnects(4999, 1, 0)}, Server, false, "1 of 5000 connects took 1 s or more"},
		{"a remote server", Input{Load: func() *report.LoadResult {
			l := withConnects(4700, 300, 0)
			l.Target, _ = report.ParseTarget("http://192.168.1.101/")
			return l
		}(), System: quiet, GeneratorPID: 42}, Server, false, "overflowed, or the network lost them"},
		{"the generator first", Input{Load: withConnects(4700, 300, 0), System: sys(99, 60, 190), GeneratorPID: 42}, Generator, false, "of 5000 connects took 1 s or more"},
		{"no connect that slow", Input{Load: withConnects(5000, 0, 0), System: quiet, GeneratorPID: 42}, Connections, true, ""},
		// A link whose every connect takes half a second: a second is no
		// sign of a dropped SYN there.
		{"a slow link", Input{Load: func() *report.LoadResult {
			l := withConnects(0, 100, 0)
			for range 4900 {
				l.Connect.Record(500_000)
			}
			return l
		}(), System: quiet, GeneratorPID: 42}, Connections, true, ""},
	} {
		v := Judge(tc.in)
		all := strings.Join(v.Reasons, " | ")
		if v.LimitedBy != tc.by || v.Valid != tc.valid || !strings.Contains(all, tc.says) {
			t.Errorf("%s: %s valid=%v %q; want %s valid=%v saying %q", tc.name, v.LimitedBy, v.Valid, all, tc.by, tc.valid, tc.says)
		}
		if !tc.valid && strings.Contains(all, "more connections (-c)") {
			t.Errorf("%s: advises more connections: %q", tc.name, all)
		}
	}
}
