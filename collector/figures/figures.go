package figures

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/verdict"
	"github.com/edgebench/edgebench/wire"
)

// Run are the summary figures of one measured window, the columns the
// store keeps and compare works on. NaN means the figure was not
// measured.
type Run struct {
	Started   time.Time
	DurationS float64
	Completed int64
	RPS       float64
	MeanUS    float64
	P50US     float64
	P99US     float64
	MaxUS     float64
	StdevUS   float64 // the latency's standard deviation (wrk's Stdev)
	Timeouts  int64
	Errors    int64
	ErrBy     wire.ErrorCounts
	CPUPct    float64 // busy: 100 % less idle and iowait
	CPUUser   float64
	CPUIdle   float64 // the machine's idle share (not iowait), as the seeds' tables give it
	// ServerCPU is the server's CPU, % of one core: its rows of role
	// server and upstream summed (verdict.ServerCPU); NaN when the probe
	// did not see it.
	ServerCPU float64
	IOKBs     float64 // read plus write over the whole disks (partitions left out)
	MemKB     float64 // used
	CachedKB  float64
	TempC     float64 // hottest zone's maximum
	Throttled bool
	// Invalid and GeneratorBound are the run's verdict: its figure does
	// not stand; the load generator was its limit. False for runs
	// recorded before verdicts.
	Invalid, GeneratorBound bool
	// CapacityRPS is a capacity search's answer, on its final trial's
	// run (the first of a capacity result); NaN elsewhere.
	CapacityRPS float64
}

// ErrorTotal is the number of failed requests of e: the one definition
// of "errors" of the collector (compare, runs, the web UI and the
// exports), the same as the run's own report counts (report.Errors.Total):
// connect, read, write, timeout, status, length, TLS set-up and HTTP/2
// stream reset.
func ErrorTotal(e wire.ErrorCounts) int64 { return rebuild.Errors(e).Total() }

// histograms keeps the latency histograms Of decodes into: each is
// 139 KB of buckets, and the collector decodes one per run it stores.
var histograms sync.Pool

// Of computes the summary figures of a run. A histogram that does not
// decode leaves the latency figures absent.
func Of(run *wire.Run, fp wire.Fingerprint) Run {
	nan := math.NaN()
	f := Run{
		Started: run.StartedAt, DurationS: float64(run.DurationUS) / 1e6, Completed: run.Completed,
		MeanUS: nan, P50US: nan, P99US: nan, MaxUS: nan, StdevUS: nan,
		Timeouts: run.Errors.Timeout, ErrBy: run.Errors,
		CPUPct: nan, CPUUser: nan, CPUIdle: nan, ServerCPU: nan, IOKBs: nan, MemKB: nan, CachedKB: nan, TempC: nan, CapacityRPS: nan,
		Throttled: fp.Throttled || fp.FreqDropped,
	}
	if v := run.Verdict; v != nil {
		f.Invalid, f.GeneratorBound = !v.Valid, v.LimitedBy == verdict.Generator
	}
	f.Errors = ErrorTotal(run.Errors)
	if f.DurationS > 0 {
		f.RPS = float64(run.Completed) / f.DurationS
	}
	if len(run.Latency) > 0 {
		h, _ := histograms.Get().(*report.Histogram)
		h, err := report.DecodeHistogramInto(h, run.Latency)
		if err == nil && h.Count() > 0 {
			f.MeanUS, f.StdevUS = h.MeanStdDev()
			f.P50US = float64(h.Quantile(0.50))
			f.P99US = float64(h.Quantile(0.99))
			f.MaxUS = float64(h.Max())
		}
		if err == nil {
			histograms.Put(h)
		}
	}
	if sy := run.System; sy != nil {
		su := sy.Summary
		if c := su.CPU; c != nil {
			f.CPUPct = float64(10000-c.Idle.Mean-c.IOWait.Mean) / 100
			f.CPUUser = float64(c.User.Mean+c.Nice.Mean) / 100
			f.CPUIdle = float64(c.Idle.Mean) / 100
		}
		if len(su.Procs) > 0 {
			// The summary alone: the server's rows are its figures, not
			// the samples'.
			only := *sy
			only.Samples = nil
			if v, ok := verdict.ServerCPU(verdict.Input{System: rebuild.SystemReport(&only)}); ok {
				f.ServerCPU = v
			}
		}
		if len(su.Disks) > 0 {
			f.IOKBs = 0
			for _, d := range su.Disks {
				if int(d.I) < len(sy.Partitions) && sy.Partitions[d.I] {
					continue
				}
				f.IOKBs += float64(d.ReadKBs.Mean + d.WriteKBs.Mean)
			}
		}
		if m := su.Mem; m != nil {
			f.MemKB = float64(m.Used.Mean)
			if m.Cached != nil {
				f.CachedKB = float64(m.Cached.Mean)
			}
		}
		if su.TempMaxDC != nil {
			f.TempC = float64(*su.TempMaxDC) / 10
		}
		if su.Throttled != nil && *su.Throttled != 0 {
			f.Throttled = true
		}
	}
	return f
}

// WriteSummary writes what the store keeps of a run once its per-second
// samples and histograms are pruned: its figures, a line each.
func WriteSummary(w io.Writer, f Run) error {
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	lat := func(us float64) string {
		switch {
		case math.IsNaN(us):
			return "-"
		case us >= 1e6:
			return strconv.FormatFloat(us/1e6, 'f', 2, 64) + "s"
		case us >= 1e3:
			return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
		}
		return strconv.FormatFloat(us, 'f', 0, 64) + "µs"
	}
	_, err := fmt.Fprintf(w, "Requests/sec: %s (%d responses in %.2f s)\n"+
		"Latency:      mean %s, stdev %s, p50 %s, p99 %s, max %s\n"+
		"Errors:       %d (timeouts %d)\n"+
		"CPU %%:        busy %s, user %s, idle %s; the server %s of one core\n",
		num(f.RPS), f.Completed, f.DurationS, lat(f.MeanUS), lat(f.StdevUS), lat(f.P50US), lat(f.P99US), lat(f.MaxUS),
		f.Errors, f.Timeouts, num(f.CPUPct), num(f.CPUUser), num(f.CPUIdle), num(f.ServerCPU))
	return err
}
