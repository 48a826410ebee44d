package loadtrial

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/measure"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/verdict"
)

// limitedNginx is nginx whose capacity is known: limit_req lets 500
// requests/s through (a burst of 50 absorbs the generator's jitter) and
// answers the others 503 at once.
func limitedNginx(t *testing.T) testenv.NginxServer {
	return testenv.NginxWith(t, testenv.NginxConfig{HTTPExtra: "limit_req_zone $binary_remote_addr zone=cap:1m rate=500r/s;\n\tlimit_req_status 503;\n\tlimit_req zone=cap burst=50 nodelay;"})
}

// The search on a real nginx of known capacity lands within the
// tolerance of the truth, and the answer is confirmed by the final trial.
func TestCapacityOfALimitedNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search takes about 30 s")
	}
	ng := limitedNginx(t)
	s, err := capacity.New(capacity.Config{SLO: capacity.SLO{{Metric: capacity.Errors, Ratio: 0.01}},
		Start: 400, Warmup: time.Second, Duration: 2 * time.Second, Final: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[int]*verdict.Verdict{}
	r := Runner{Load: loadgen.Config{URL: "http://" + ng.Addr + "/", Connections: 16, KeepAlive: true},
		Watches:  []probe.Watch{{PID: ng.Master, Tree: true}},
		Measured: func(t capacity.Trial, run measure.Run) { verdicts[t.N] = run.Verdict }}
	res, err := capacity.Drive(context.Background(), s, r.Run, func(rec capacity.Record) {
		t.Logf("%s %v: achieved %.0f, %d of %d failed, server %.0f %%, generator %.0f %%, pass %v %v; run verdict: %s",
			rec.Kind, rec.Rate, rec.Achieved, rec.Failed, rec.Requests, rec.ServerCPU, rec.GeneratorCPU*100, rec.Pass, rec.Reasons, verdicts[rec.N].Line())
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Answer())
	if res.Limit != capacity.BySLO || !res.Confirmed || math.Abs(res.Capacity-500)/500 > 0.05 {
		t.Errorf("capacity %v (%s), want 500 within 5 %%", res.Capacity, res.Answer())
	}
	// The trials above the limit failed on nginx's 503s, not on a rate
	// the generator could not deliver.
	for _, rec := range res.Records {
		if rec.Rate >= 600 && (rec.Pass || rec.Failed == 0) {
			t.Errorf("trial at %v: pass %v with %d failures", rec.Rate, rec.Pass, rec.Failed)
		}
		if rec.ServerCPU <= 0 || rec.GeneratorCPU <= 0 {
			t.Errorf("trial at %v: server CPU %v, generator's %v", rec.Rate, rec.ServerCPU, rec.GeneratorCPU)
		}
		if rec.GeneratorLimited {
			t.Errorf("trial at %v judged generator-limited: %s", rec.Rate, rec.GeneratorReason)
		}
		// The trial's run verdict, with the generator's CPU, says the same.
		if v := verdicts[rec.N]; v == nil || v.GeneratorBound() != rec.GeneratorLimited || v.LimitedBy == verdict.Generator {
			t.Errorf("trial %d at %v: run verdict %+v, trial generator-limited %v", rec.N, rec.Rate, v, rec.GeneratorLimited)
		}
	}
}
