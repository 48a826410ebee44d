package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
)

// Issue 28 item 3: a download still flowing when the window closed (wrk
// -t1 -c1 -d4s against nginx's limit_rate: 80 MB read, no response
// completed). The verdict said "mean latency 0us": no reason may quote a
// latency no request backs; it says no response completed, with the
// bytes read, and the figure does not stand, with the probe or without.
func TestNoResponseCompleted(t *testing.T) {
	flowing := func() *report.LoadResult {
		return &report.LoadResult{Connections: 1, Threads: 1, Duration: 4 * time.Second, WholeRequestTimeout: true,
			Bytes: 80 << 20, Latency: report.NewLatencyHistogram(), Drained: report.Drained{Requests: 1, Cut: 1, Bytes: 40 << 20}}
	}
	// Every response late with wrk's timeout: completed, but none in
	// the latency.
	late := flowing()
	late.Bytes, late.Completed, late.Errors.Timeout, late.Drained = 500, 2, 2, report.Drained{}
	short := &machine.Report{Summary: machine.Summary{Procs: []machine.ProcSummary{{Name: "nginx", PID: 7, Count: 2}}}}
	for _, tc := range []struct {
		name string
		in   Input
		by   string
		says string
	}{
		{"flowing, no probe", Input{Load: flowing()}, Server,
			"no response completed in the measured window (4.00s): 1 request in flight at its end, 80.0 MiB read (20.0 MiB/s): a response takes longer than the run (a longer -d measures one)"},
		{"flowing, probe", Input{Load: flowing(), System: sys(30, 20, 5), GeneratorPID: 42}, Server, "80.0 MiB read (20.0 MiB/s)"},
		{"flowing, too short for the probe's rates", Input{Load: flowing(), System: short}, Server, "no response completed"},
		{"every response late", Input{Load: late}, Errors, "every response took the timeout or longer"},
	} {
		v := Judge(tc.in)
		all := strings.Join(v.Reasons, " | ")
		if v.Valid || v.LimitedBy != tc.by || !strings.Contains(all, tc.says) {
			t.Errorf("%s: %s valid=%v %q; want %s, not valid, saying %q", tc.name, v.LimitedBy, v.Valid, all, tc.by, tc.says)
		}
		if strings.Contains(all, "latency 0") || strings.Contains(all, " 0us") || strings.Contains(all, "requests measured") {
			t.Errorf("%s: a latency no request backs: %q", tc.name, all)
		}
	}
	// A window with a latency says nothing of the kind.
	if v := Judge(Input{Load: load(5000, 300)}); strings.Contains(strings.Join(v.Reasons, " "), "no response") {
		t.Errorf("a run with 5000 responses: %q", v.Reasons)
	}
}
