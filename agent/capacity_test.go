package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// resultLog is an eventLog that keeps the results too.
type resultLog struct {
	eventLog
	rmu     sync.Mutex
	results []*wire.Result
}

func (l *resultLog) PublishResult(_ context.Context, r *wire.Result) error {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	l.results = append(l.results, r)
	return nil
}

// run accepts cmd on a and runs it to its end: its one result.
func (l *resultLog) run(t *testing.T, a *Agent, cmd *wire.Command) *wire.Result {
	t.Helper()
	a.command(context.Background(), incoming{cmd: cmd})
	if ev := l.last(cmd.ID); ev == nil || ev.State != wire.StateAccepted {
		t.Fatalf("%+v", ev)
	}
	a.execute(context.Background(), <-a.jobs)
	if len(l.results) != 1 {
		t.Fatalf("%d results", len(l.results))
	}
	return l.results[0]
}

func capacityCmd(url string, f func(*wire.CapacitySpec)) *wire.Command {
	now := time.Now().UTC()
	s := &wire.CapacitySpec{Load: wire.LoadTestSpec{URL: url, Connections: 4, KeepAlive: true}, SLO: "p99<500ms,errors<1%"}
	f(s)
	return &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute),
		Kind: wire.KindCapacity, Spec: wire.CommandSpec{Capacity: s}}
}

// The policy bounds a capacity search: its rate cap, the length of one
// trial and the total time; a bad SLO and a target outside the allowlist
// are refused before anything runs.
func TestCapacityCommandWithinPolicy(t *testing.T) {
	a, log := newTestAgent(t)
	a.cfg.Policy.MaxRate = 1000
	a.cfg.Policy.MaxDuration = 10 * time.Second
	a.cfg.Policy.MaxRepeat = 6 // 60 s in all
	p, err := NewPolicy(a.cfg.Policy)
	if err != nil {
		t.Fatal(err)
	}
	a.policy = p
	const u = "http://127.0.0.1:1/"
	for _, c := range []struct {
		cmd  *wire.Command
		want string
	}{
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.SLO = "p98<5ms" }), `slo: "p98<5ms": unknown metric`},
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.MaxRate = 1001 }), "max rate 1001 over cap 1000"},
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.FinalMS = 11_000 }), "final trial 11s over cap 10s"},
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.BudgetMS = 61_000 }), "budget 1m1s over cap 1m0s"},
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.Load.Connections = 100_000 }), "connections 100000 over cap"},
		{capacityCmd("http://10.1.2.3/", func(*wire.CapacitySpec) {}), "not in allowlist"},
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.StartRate = 2000 }), "start rate 2000 over cap 1000"},
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.StartRate, s.MaxRate = 500, 400 }), "rates"},
		{capacityCmd(u, func(s *wire.CapacitySpec) { s.TrialMS = 11_000 }), "trial 11s over cap 10s"},
	} {
		a.command(context.Background(), incoming{cmd: c.cmd})
		ev := log.last(c.cmd.ID)
		if ev == nil || ev.State != wire.StateRejected || !strings.Contains(ev.Reason, c.want) {
			t.Errorf("%s: got %+v", c.want, ev)
		}
	}
	// Zero fields take the policy's caps and the defaults.
	sc, err := a.capacityConfig(capacityCmd(u, func(*wire.CapacitySpec) {}).Spec.Capacity)
	if err != nil || sc.MaxRate != 1000 || sc.Budget != time.Minute || sc.Duration != 5*time.Second || sc.Final != 10*time.Second || sc.Start != 50 {
		t.Errorf("%+v %v", sc, err)
	}
}

// A capacity command run by the agent against nginx faster than the
// policy's rate cap: the search stops at the cap, says "at least", and the
// result carries every trial and the final trial's run. Other processes
// may hold the cores (make test runs packages side by side): the search
// then stops at a trial the run verdict calls the generator's; it is run
// again, up to 3 times, and the test skips loudly if each one was.
func TestCapacityCommandRuns(t *testing.T) {
	ng := testenv.Nginx(t, 1)
	var busy []string
	for range 3 {
		why := capacityCommandRuns(t, ng)
		if why == "" || t.Failed() {
			return
		}
		busy = append(busy, why)
	}
	t.Skipf("!!! other processes held the generator's cores in each of 3 searches (%s): SKIPPING the check of the rate cap's answer, which needs a quieter machine", strings.Join(busy, "; "))
}

// capacityCommandRuns runs one capacity command against ng and checks
// it; it returns the answer when the generator limited the search, ""
// when its answer was checked.
func capacityCommandRuns(t *testing.T, ng testenv.NginxServer) (busy string) {
	a, _ := newTestAgent(t)
	log := &resultLog{}
	a.SetLink(log, nil)
	a.cfg.Policy.MaxRate = 150
	p, err := NewPolicy(a.cfg.Policy)
	if err != nil {
		t.Fatal(err)
	}
	a.policy = p
	cmd := capacityCmd("http://"+ng.Addr+"/", func(s *wire.CapacitySpec) {
		s.StartRate, s.TrialMS, s.FinalMS = 100, 500, 1000
		s.Load.Labels = []wire.Label{{K: "server", V: "nginx"}}
	})
	a.command(context.Background(), incoming{cmd: cmd})
	if ev := log.last(cmd.ID); ev == nil || ev.State != wire.StateAccepted {
		t.Fatalf("%+v", ev)
	}
	a.execute(context.Background(), <-a.jobs)
	if ev := log.last(cmd.ID); ev == nil || ev.State != wire.StateSucceeded {
		t.Fatalf("%+v", ev)
	}
	r := log.results[0]
	c := r.Capacity
	if c == nil || len(c.Trials) == 0 {
		t.Fatalf("%+v %+v", r, c)
	}
	// Each trial's window, start and end, numbered from 0 for the
	// collector's marks on a watch: trial 1 is run 0. Whatever the
	// answer: a busy box stops the search sooner, not its windows.
	var windows []string
	log.mu.Lock()
	for _, ev := range log.events {
		if ev.CommandID == cmd.ID && ev.Window != nil {
			if want := fmt.Sprintf("measured window %ss (run %d)", ev.Window.Edge, ev.Window.Run); ev.Reason != want {
				t.Errorf("window event's reason %q, want %q", ev.Reason, want)
			}
			windows = append(windows, fmt.Sprintf("%s %d", ev.Window.Edge, ev.Window.Run))
		}
	}
	log.mu.Unlock()
	if len(windows) != 2*len(c.Trials) || windows[0] != "start 0" || windows[1] != "end 0" ||
		windows[len(windows)-1] != fmt.Sprintf("end %d", len(c.Trials)-1) {
		t.Errorf("%d trials, window events %q", len(c.Trials), windows)
	}
	if c.LimitedBy == "generator" && !c.Confirmed && strings.Contains(c.Answer, "other processes") {
		return c.Answer
	}
	if r.Kind != wire.KindCapacity || c == nil || c.CapacityRPS != 150 || c.LimitedBy != "rate_cap" || !c.AtLeast || !c.Confirmed {
		t.Fatalf("%+v %+v", r, c)
	}
	for _, tr := range c.Trials {
		if tr.OfferedRPS > 150 {
			t.Errorf("a trial at %v, over the cap", tr.OfferedRPS)
		}
	}
	if last := c.Trials[len(c.Trials)-1]; last.Kind != "final" || last.DurationMS != 1000 || !last.Pass {
		t.Errorf("last trial %+v", last)
	}
	if len(r.Runs) != 1 || r.Spec.Mode != "capacity" || r.Labels["server"] != "nginx" || r.Runs[0].Completed < 100 {
		t.Errorf("runs %d, spec %+v, labels %v", len(r.Runs), r.Spec, r.Labels)
	}
	return ""
}

// A capacity command against a target that never answers successfully
// (every answer a 404: a wrong URL) stops after its first trial, as
// edgebench capacity does, rather than bisecting down to its lowest rate:
// the result fails with the first trial's failures.
func TestCapacityCommandStopsOnADeadTarget(t *testing.T) {
	a, _ := newTestAgent(t)
	log := &resultLog{}
	a.SetLink(log, nil)
	cmd := capacityCmd(testenv.Target(t, "")+"/status/404", func(s *wire.CapacitySpec) {
		s.StartRate, s.TrialMS, s.FinalMS, s.Load.WarmupMS = 20, 300, 600, 100
	})
	r := log.run(t, a, cmd)
	c := r.Capacity
	if c == nil || len(c.Trials) != 1 || c.CapacityRPS != 0 || c.LimitedBy != "errors" {
		t.Fatalf("capacity %+v; outcome %s %q", c, r.Outcome, r.Reason)
	}
	if r.Outcome != wire.StateFailed || !strings.Contains(r.Reason, "no successful response in the first trial, at 20 req/s (") {
		t.Errorf("outcome %s, reason %q", r.Outcome, r.Reason)
	}
}
