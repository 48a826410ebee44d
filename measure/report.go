package measure

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/verdict"
)

// This file writes what a measurement printed on the device: each run's
// report (the load generator's, the System section, the verdict) and what
// follows the runs (their spread, or the JSON document of all of them).
// `edgebench run`, `ab` and `wrk` print through it.

// ToolReport writes the report of a tool a command stands in for (ab's,
// wrk's) instead of a format's.
type ToolReport func(w io.Writer, r *report.LoadResult) error

// WriteRun writes the text report of one run: tool's when it is not nil,
// else format's (edgebench, ab, wrk or h2load), then the System section.
// The verdict follows edgebench's throughput line; the tools' layouts stay
// line for line, and it follows them, after the System section.
func WriteRun(w io.Writer, o Run, format string, tool ToolReport) error {
	var err error
	switch {
	case tool != nil:
		err = tool(w, o.Load)
	case format == "ab":
		err = report.WriteAB(w, o.Load, report.ABOptions{})
	case format == "h2load":
		if err = report.WriteH2loadHead(w, o.Load); err == nil {
			err = report.WriteH2load(w, o.Load)
		}
	case format == "wrk":
		err = report.WriteWrk(w, o.Load, report.WrkOptions{Latency: true})
	default:
		// The rate offered and reached, and the verdict, right after the
		// throughput.
		var b strings.Builder
		if err = report.WriteText(&b, o.Load); err == nil {
			_, err = io.WriteString(w, verdict.InsertText(b.String(), verdict.TextLines(o.Verdict, o.Load)))
		}
	}
	if err == nil && o.System != nil {
		// A blank line and the section's own heading: no line of it
		// repeats a label of the report, so scripts that grep the
		// report's lines find each once.
		fmt.Fprintln(w)
		err = o.System.WriteText(w)
	}
	if err == nil && (tool != nil || format == "ab" || format == "wrk" || format == "h2load") {
		// The tools' layouts stay line for line; what limited the run
		// follows them, after the System section, its lines as run's.
		if lines := verdict.TextLines(o.Verdict, o.Load); len(lines) > 0 {
			_, err = fmt.Fprintf(w, "\n%s\n", strings.Join(trimLines(lines), "\n"))
		}
	}
	return err
}

func trimLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// WriteSpread writes what follows the text reports of runs: the spread of
// repeated runs (WriteRepeat), and whether --repeat auto's runs (auto not
// nil) became stable.
func WriteSpread(w io.Writer, runs []Run, auto *Auto) {
	if len(runs) > 1 {
		s := report.Summarize(Loads(runs))
		WriteRepeat(w, &s)
	}
	if auto == nil {
		return
	}
	stable, rsd := auto.Stable(runs)
	judged, _ := Judged(runs)
	word := "stable"
	if !stable {
		word = "NOT stable"
	}
	fixed := ""
	if judged != "req/s" {
		word, fixed = word+" on "+judged, "; req/s is fixed by --rate"
	}
	fmt.Fprintf(w, "  %s after %d runs: %s varies by %.1f %% (--repeat-rsd %s %%%s)\n", word, len(runs), judged, rsd, strconv.FormatFloat(auto.RSDPct, 'f', -1, 64), fixed)
}

// WriteRepeat writes the spread of the runs: each figure's mean and
// standard deviation, and its geometric mean with the 95 % confidence
// interval computed on the logarithms (report.Spread), which stays
// positive; when a run's figure was 0 there is no logarithm, and the
// mean's interval, clamped at 0, says so.
func WriteRepeat(w io.Writer, s *report.Repeated) {
	fmt.Fprintf(w, "\nover %d runs (mean ± stdev; geometric mean [95%% CI, on logarithms])\n", s.Runs)
	row := func(name string, sp report.Spread, unit string) {
		switch sp.CIOf {
		case "":
			fmt.Fprintf(w, "  %-8s none: no run had a response to measure\n", name)
		case "mean":
			fmt.Fprintf(w, "  %-8s %12.2f ± %-10.2f mean [%.2f, %.2f] %s (a run had 0: the mean's interval, clamped at 0)\n",
				name, sp.Mean, sp.StdDev, sp.CILow, sp.CIHigh, unit)
		default:
			fmt.Fprintf(w, "  %-8s %12.2f ± %-10.2f geo %.2f [%.2f, %.2f] %s\n", name, sp.Mean, sp.StdDev, sp.GeoMean, sp.CILow, sp.CIHigh, unit)
		}
	}
	row("req/s", s.RPS, fmt.Sprintf("(rsd %.1f%%)", s.RSD))
	row("p50", s.P50, "us")
	row("p99", s.P99, "us")
}

// RunsJSON is the --format json document of runs: the last run's
// figures, system and verdict at the top, every run's under Runs when
// there were several, and their spread.
type RunsJSON struct {
	RunJSON
	Labels map[string]string `json:"labels,omitempty"`
	Runs   []RunJSON         `json:"runs,omitempty"`
	Repeat *report.Repeated  `json:"repeat,omitempty"`
	// Repetitions and Stable are --repeat auto's: the runs it took and
	// whether their req/s became stable.
	Repetitions int   `json:"repetitions,omitempty"`
	Stable      *bool `json:"stable,omitempty"`
	// Judged is the figure Stable was judged on ("req/s"; "p99" in open
	// loop, where the rate fixes req/s) and JudgedRSD its relative
	// standard deviation across the runs, in %.
	Judged    string   `json:"judged,omitempty"`
	JudgedRSD *float64 `json:"judged_rsd_pct,omitempty"`
}

// RunJSON is one run in the JSON document.
type RunJSON struct {
	report.JSON
	System  *machine.Report  `json:"system,omitempty"`
	Verdict *verdict.Verdict `json:"verdict,omitempty"`
}

// JSONOf is the JSON document of runs, --repeat auto's when auto is not
// nil, with the labels given.
func JSONOf(runs []Run, auto *Auto, labels map[string]string) RunsJSON {
	last := runs[len(runs)-1]
	doc := RunsJSON{RunJSON: RunJSON{JSON: last.Load.JSON(), System: last.System, Verdict: last.Verdict}}
	if len(runs) > 1 {
		s := report.Summarize(Loads(runs))
		doc.Repeat = &s
		for _, r := range runs {
			doc.Runs = append(doc.Runs, RunJSON{r.Load.JSON(), r.System, r.Verdict})
		}
	}
	if auto != nil {
		stable, rsd := auto.Stable(runs)
		doc.Stable, doc.JudgedRSD = &stable, &rsd
		doc.Repetitions = len(runs)
		doc.Judged, _ = Judged(runs)
	}
	if len(labels) > 0 {
		doc.Labels = labels
	}
	return doc
}

// WriteJSON writes JSONOf(runs, auto, labels), indented.
func WriteJSON(w io.Writer, runs []Run, auto *Auto, labels map[string]string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(JSONOf(runs, auto, labels))
}
