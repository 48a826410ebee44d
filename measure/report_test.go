package measure

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/verdict"
)

// reportRun is a run of n requests of us each, with a System section and
// a verdict.
func reportRun(n, us int64) Run {
	hist := func(v int64) *report.Histogram {
		h := report.NewLatencyHistogram()
		for range n {
			h.Record(v)
		}
		return h
	}
	l := &report.LoadResult{Connections: 2, Threads: 1, Duration: 1e9, Completed: n, OK: n, DocLength: 10,
		StatusCodes: map[int]int64{200: n}, Latency: hist(us), Connect: hist(0), Waiting: hist(us / 2), Processing: hist(us)}
	return Run{Load: l, System: &machine.Report{}, Verdict: &verdict.Verdict{LimitedBy: verdict.Server, Valid: true, Reasons: []string{"nginx at 99 % of one core"}}}
}

// TestWriteRunPlacesTheVerdict: edgebench's layout has the verdict right
// after its throughput line; the tools' stay line for line, the verdict
// after their System section.
func TestWriteRunPlacesTheVerdict(t *testing.T) {
	r := reportRun(100, 500)
	const line = "limited by server: nginx at 99 % of one core; valid"
	var b strings.Builder
	if err := WriteRun(&b, r, "edgebench", nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	th, v, sys := strings.Index(out, "\n  throughput "), strings.Index(out, "  verdict     "+line), strings.Index(out, "System")
	if th < 0 || v < th || sys < v || strings.Count(out, line) != 1 || strings.Count(out[th+1:v], "\n") != 1 {
		t.Errorf("edgebench's layout: the verdict not right after the throughput:\n%s", out)
	}
	for _, c := range []struct {
		format string
		tool   ToolReport
		head   string
	}{
		{"ab", nil, "Document Length:"},
		{"wrk", nil, "Latency Distribution"},
		{"h2load", nil, "finished in"},
		{"edgebench", func(w io.Writer, _ *report.LoadResult) error {
			_, err := io.WriteString(w, "the tool's report\n")
			return err
		}, "the tool's report"},
	} {
		b.Reset()
		if err := WriteRun(&b, r, c.format, c.tool); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		h, sys, v := strings.Index(out, c.head), strings.Index(out, "System"), strings.Index(out, "\nverdict     "+line+"\n")
		if h < 0 || sys < h || v < sys {
			t.Errorf("%s (tool %v): report, System, then the verdict:\n%s", c.format, c.tool != nil, out)
		}
	}
}

// TestRunsJSON: the last run at the top, every run under runs and their
// spread when there were several, --repeat auto's figures, the labels.
func TestRunsJSON(t *testing.T) {
	runs := []Run{reportRun(100, 500), reportRun(200, 400), reportRun(300, 300)}
	var b bytes.Buffer
	if err := WriteJSON(&b, runs, &Auto{RSDPct: 3.5}, map[string]string{"server": "nginx"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Completed   int64             `json:"completed"`
		Labels      map[string]string `json:"labels"`
		Runs        []json.RawMessage `json:"runs"`
		Repeat      *report.Repeated  `json:"repeat"`
		Repetitions int               `json:"repetitions"`
		Stable      *bool             `json:"stable"`
		Judged      string            `json:"judged"`
		JudgedRSD   *float64          `json:"judged_rsd_pct"`
		Verdict     *verdict.Verdict  `json:"verdict"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Completed != 300 || doc.Labels["server"] != "nginx" || len(doc.Runs) != 3 || doc.Repeat == nil || doc.Repeat.Runs != 3 ||
		doc.Repetitions != 3 || doc.Stable == nil || *doc.Stable || doc.Judged != "req/s" || doc.JudgedRSD == nil || *doc.JudgedRSD <= 3.5 ||
		doc.Verdict == nil || doc.Verdict.LimitedBy != verdict.Server {
		t.Errorf("document %s", b.String())
	}
	one := JSONOf(runs[:1], nil, nil)
	if one.Runs != nil || one.Repeat != nil || one.Stable != nil || one.Labels != nil || one.Completed != 100 {
		t.Errorf("one run: %+v", one)
	}
}
