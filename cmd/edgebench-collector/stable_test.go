package main

import (
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/collector/show"
	"github.com/edgebench/edgebench/wire"
)

// StableText names the figure judged when it is not req/s (open loop's
// p99) with that figure's deviation, not req/s's.
func TestStableTextNamesTheJudgedFigure(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		rp   *wire.Repeat
		want string
	}{
		{&wire.Repeat{Runs: 3, RSDPct: 1.2, Auto: true, Stable: &yes}, "stable (1.2 %) after 3 runs"},
		{&wire.Repeat{Runs: 10, RSDPct: 0.01, Auto: true, Stable: &no, Judged: "p99", JudgedRSDPct: 103.5}, "not stable on p99 (103.5 %) after 10 runs"},
		{&wire.Repeat{Runs: 4, RSDPct: 0, Auto: true, Stable: &yes, Judged: "p99", JudgedRSDPct: 2.1}, "stable on p99 (2.1 %) after 4 runs"},
	} {
		if got := rebuild.StableText(tc.rp); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// A capacity result's spec is the search's, without a rate; its run is
// the final trial's, open loop at the answer's rate: show reports it so,
// not as a closed-loop run.
func TestShowCapacityFinalTrialIsOpenLoop(t *testing.T) {
	res := frozenResult(t, "result-capacity")
	res.Spec.Rate, res.Spec.Mode = 0, "capacity" // as the agent sends it
	var b strings.Builder
	if err := show.Write(&b, res, "edgebench", -1); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "open loop at 500 req/s") || strings.Contains(out, "closed loop") {
		t.Errorf("the final trial's report:\n%s", out)
	}
	if got := rebuild.RunSpec(res).Rate; got != 500 || res.Spec.Rate != 0 {
		t.Errorf("RunSpec rate %v (spec left %v)", got, res.Spec.Rate)
	}
}
