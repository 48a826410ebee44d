// Package show writes a stored result as the device printed it: its
// head (the device, the spec), then each run's report in the layout asked
// (edgebench's, ab's or wrk's, rebuilt from the payload), its verdict and
// its System section; or what is kept of a result whose samples were
// pruned. edgebench-collector show and the tests use it.
package show

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/verdict"
	"github.com/edgebench/edgebench/wire"
)

// Write writes a result's report: its spec, the device, then per run
// (or only run only) the load report and the System section.
func Write(w io.Writer, res *wire.Result, format string, only int) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	escape.MakePrintable(res)
	fmt.Fprintf(w, "result %s  %s/%s  %s  %s  %s\n", res.ID, res.Fleet, res.Device, res.CreatedAt.Local().Format(time.RFC3339),
		res.Outcome, group.LabelString(res.Labels))
	if res.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", res.Reason)
	}
	fmt.Fprintf(w, "spec: %s\n", group.ResultSpec(res))
	fp := res.Fingerprint
	fmt.Fprintf(w, "device: %s, %s, kernel %s, %s", orDash(fp.Board), orDash(fp.OS), orDash(fp.Kernel), orDash(fp.Arch))
	if fp.Throttled || fp.FreqDropped {
		fmt.Fprint(w, "  THROTTLED")
	}
	fmt.Fprintln(w)
	if l := res.Loader; l != nil {
		lf := l.Fingerprint
		fmt.Fprintf(w, "loaded from %s/%s (its result %s): %s, %s, kernel %s, %s\n", l.Fleet, l.Device, l.ResultID,
			orDash(lf.Board), orDash(lf.OS), orDash(lf.Kernel), orDash(lf.Arch))
	}
	if c := res.Capacity; c != nil {
		rep := capacity.ReportOf(c)
		fmt.Fprintf(w, "\ncapacity search under %s:\n%s\n", c.SLO, capacity.TrialHeader)
		for _, t := range rep.Trials {
			capacity.WriteTrial(w, t)
		}
		capacity.WriteAnswer(w, rep)
		if len(res.Runs) > 0 {
			fmt.Fprintln(w, "\nthe final trial:")
		}
	}
	for i := range res.Runs {
		if only >= 0 && i != only {
			continue
		}
		run := &res.Runs[i]
		if len(res.Runs) > 1 {
			fmt.Fprintf(w, "\n--- run %d of %d\n", i+1, len(res.Runs))
		}
		fmt.Fprintln(w)
		lr, err := rebuild.LoadResult(run, rebuild.RunSpec(res))
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		switch format {
		case "ab":
			err = report.WriteAB(w, lr, report.ABOptions{})
		case "wrk":
			err = report.WriteWrk(w, lr, report.WrkOptions{Latency: true})
		default:
			// The device's report, the rate and the verdict after its
			// throughput (results recorded before verdicts have none).
			var b strings.Builder
			if err = report.WriteText(&b, lr); err == nil {
				_, err = io.WriteString(w, verdict.InsertText(b.String(), verdict.TextLines(rebuild.VerdictOf(run), lr)))
			}
		}
		if err != nil {
			return err
		}
		for _, m := range []struct {
			sys   *wire.System
			whose string
		}{{run.System, "target"}, {run.Loader, "loader"}} {
			if m.sys == nil {
				continue
			}
			fmt.Fprintln(w)
			if res.Loader != nil { // two machines: say whose
				dev := res.Fleet + "/" + res.Device
				if m.whose == "loader" {
					dev = res.Loader.Fleet + "/" + res.Loader.Device
				}
				fmt.Fprintf(w, "The %s, %s:\n", m.whose, dev)
			}
			if err := rebuild.SystemReport(m.sys).WriteText(w); err != nil {
				return err
			}
		}
		if res.Loader != nil && run.System == nil {
			fmt.Fprintf(w, "\nThe target, %s/%s: not measured over this run (its watch closed no window of it)\n", res.Fleet, res.Device)
		}
	}
	if rp := res.Repeat; rp != nil {
		fmt.Fprintf(w, "\n%d runs: req/s %.2f ± %.2f (95 %% CI %.2f .. %.2f), rsd %.2f %%\n", rp.Runs, rp.RPS.Mean, rp.RPS.StdDev, rp.RPS.CILow, rp.RPS.CIHigh, rp.RSDPct)
		if st := rebuild.StableText(rp); st != "" {
			fmt.Fprintf(w, "--repeat auto: %s\n", st)
		}
	}
	return nil
}

// Pruned writes what is kept of a result whose samples were pruned:
// its head as Write's, then per run (or only run only) the figures
// the store keeps, the verdict and the System section of the probe's
// summary.
func Pruned(w io.Writer, res *wire.Result, figs []figures.Run, only int) error {
	escape.MakePrintable(res)
	if err := Write(w, &wire.Result{ID: res.ID, Fleet: res.Fleet, Device: res.Device, CreatedAt: res.CreatedAt, Outcome: res.Outcome,
		Reason: res.Reason, Labels: res.Labels, Spec: res.Spec, Fingerprint: res.Fingerprint, Capacity: res.Capacity}, "edgebench", -1); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nsamples pruned: the per-second samples, timelines and latency histograms of this result are no longer kept"+
		" (the collector keeps them for --keep-samples); what is kept of each run:")
	for i := range res.Runs {
		if only >= 0 && i != only {
			continue
		}
		run := &res.Runs[i]
		if len(res.Runs) > 1 {
			fmt.Fprintf(w, "\n--- run %d of %d\n", i+1, len(res.Runs))
		}
		fmt.Fprintln(w)
		if i < len(figs) {
			if err := figures.WriteSummary(w, figs[i]); err != nil {
				return err
			}
		}
		if v := rebuild.VerdictOf(run); v != nil {
			fmt.Fprintf(w, "Verdict:      %s\n", v.Line())
		}
		if run.System != nil {
			fmt.Fprintln(w)
			if err := rebuild.SystemReport(run.System).WriteText(w); err != nil {
				return err
			}
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
