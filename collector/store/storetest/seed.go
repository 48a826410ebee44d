package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/wire"
)

// SeedVerdicts stores nginx runs the server limited and kangle runs, 20 %
// faster, that the load generator limited.
func SeedVerdicts(t *testing.T, s *store.Store) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var batch []store.Incoming
	for range 10 {
		n := FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at, 1000+rng.Float64()*20, 800)
		for i := range n.Runs {
			n.Runs[i].Verdict = &wire.Verdict{LimitedBy: "server", Valid: true, Reasons: []string{"nginx at 99 % of one core"}}
		}
		k := FakeResult(rng, "lab", "pi-1", map[string]string{"server": "kangle"}, at.Add(time.Second), 1200+rng.Float64()*20, 650)
		for i := range k.Runs {
			k.Runs[i].Verdict = &wire.Verdict{LimitedBy: "generator", Reasons: []string{"edgebench itself used 99 % of one core"}}
		}
		batch = append(batch, Incoming(t, n), Incoming(t, k))
		at = at.Add(time.Minute)
	}
	if _, err := s.Ingest(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
}

// Schedule is a schedule of fleet lab named name, every second, of a
// one-second test of one connection.
func Schedule(name string) *scheduledb.Schedule {
	return &scheduledb.Schedule{Name: name, Every: time.Second, Trigger: scheduledb.TriggerRequest{Fleet: "lab",
		Spec: wire.LoadTestSpec{URL: "http://127.0.0.1/", Connections: 1, DurationMS: 1000}}}
}

// SeedMixedSpecs stores what a user of the seeds' workloads ends up with
// on pi-1: three runs of nginx and three of kangle on /index.html, and
// one run of nginx on /mixed, a slow page that timed out 99 times.
func SeedMixedSpecs(t testing.TB, s *store.Store) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)
	var batch []store.Incoming
	add := func(server, path string, rps float64, p50 int64, timeouts int64) {
		r := FakeResult(rng, "lab", "pi-1", map[string]string{"server": server}, at, rps, p50)
		r.Spec.URL = "http://127.0.0.1:8080" + path
		r.Runs[0].Errors.Timeout = timeouts
		batch = append(batch, Incoming(t, r))
		at = at.Add(time.Minute)
	}
	for i := range 3 {
		add("nginx", "/index.html", 1000+float64(i)*7, 800, 0)
		add("kangle", "/index.html", 1200+float64(i)*5, 650, 0)
	}
	add("nginx", "/mixed", 40, 45000, 99)
	if _, err := s.Ingest(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
}
