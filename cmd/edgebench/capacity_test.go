package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A bad SLO or flag of capacity: one line naming it, exit status 2.
func TestCapacityUsageErrors(t *testing.T) {
	for args, want := range map[string]string{
		"capacity http://127.0.0.1/":                                       "--slo is required",
		"capacity --slo p98<5ms http://127.0.0.1/":                         `unknown metric "p98"`,
		"capacity --slo p99<fast http://127.0.0.1/":                        "want a latency bound such as 50ms",
		"capacity --slo errors<200% http://127.0.0.1/":                     "a ratio above 100% bounds nothing",
		"capacity --slo p99<5ms --tolerance 0 http://127.0.0.1/":           "--tolerance",
		"capacity --slo p99<5ms --trial 5s --final 1s http://127.0.0.1/":   "--final 1s: want at least the trial's 5s",
		"capacity --slo p99<5ms --format xml http://127.0.0.1/":            "--format",
		"capacity --slo p99<5ms --start 10 --max-rate 5 http://127.0.0.1/": "rates",
		"capacity --slo p99<5ms":                                           "missing URL",
	} {
		r := runBinary(t, strings.Fields(args)...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "edgebench capacity: ") || !strings.Contains(lines[0], want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", args, r.code, r.stderr, want)
		}
	}
}

// A search against the built-in target, bounded by --max-rate: the text
// has a line per trial and the answer; the JSON has capacity_rps and
// every trial.
func TestCapacityAgainstTheTarget(t *testing.T) {
	u := startTarget(t)
	args := []string{"capacity", "--slo", "p99<500ms,errors<1%", "--start", "50", "--max-rate", "100", "--warmup", "0",
		"--trial", "500ms", "--final", "1s", "-c", "4", u + "/bytes/10"}
	r := runBinary(t, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "capacity: at least 100 req/s: the highest rate allowed met the SLO") ||
		strings.Count(r.stdout, " pass\n") != 3 || !strings.Contains(r.stdout, "    3 final ") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, append(args, "--format", "json")...)
	var rep struct {
		Capacity  float64 `json:"capacity_rps"`
		AtLeast   bool    `json:"at_least"`
		LimitedBy string  `json:"limited_by"`
		Confirmed bool    `json:"confirmed"`
		Trials    []struct {
			Kind     string   `json:"kind"`
			Offered  float64  `json:"offered_rps"`
			Achieved float64  `json:"achieved_rps"`
			P99      int64    `json:"p99_us"`
			GenCPU   *float64 `json:"generator_cpu_pct"`
			Pass     bool     `json:"pass"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.Capacity != 100 || !rep.AtLeast || rep.LimitedBy != "rate_cap" || !rep.Confirmed || len(rep.Trials) != 3 {
		t.Fatalf("%+v", rep)
	}
	for _, tr := range rep.Trials {
		if !tr.Pass || tr.Achieved < 0.9*tr.Offered || tr.P99 <= 0 || tr.GenCPU == nil {
			t.Errorf("trial %+v", tr)
		}
	}
}
