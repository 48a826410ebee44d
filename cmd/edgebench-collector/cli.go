package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// dbVar adds --db, the store, to p: by default $EDGEBENCH_DB or else
// edgebench.db.
func dbVar(fs *cli.FlagSet, env *cli.Env, p *string) {
	def := env.Getenv("EDGEBENCH_DB")
	if def == "" {
		def = "edgebench.db"
	}
	fs.StringVar(p, "db", def, "the store: a SQLite file, or a postgres:// URL (or EDGEBENCH_DB)")
}

// openDB opens an existing store for the reading commands: a SQLite file
// must be there already; a PostgreSQL database is migrated if need be.
func openDB(ctx context.Context, dsn string) (*collector.Store, error) {
	if !collector.IsPostgres(dsn) {
		if _, err := os.Stat(dsn); err != nil {
			return nil, fmt.Errorf("store %s: %w (start 'edgebench-collector serve' or pass --db)", dsn, err)
		}
	}
	return collector.OpenStore(ctx, dsn)
}

// filterFlags are the run filters the reading commands share.
type filterFlags struct {
	db     string
	f      collector.Filter
	labels cli.Pairs
	since  time.Duration
}

func addFilterFlags(fs *cli.FlagSet, env *cli.Env, ff *filterFlags) {
	ff.labels = cli.Pairs{}
	dbVar(fs, env, &ff.db)
	fs.StringVar(&ff.f.Fleet, "fleet", "", "only this fleet")
	fs.StringVar(&ff.f.Device, "device", "", "only this device")
	fs.StringVar(&ff.f.Command, "cmd", "", "only the results of this command")
	fs.Var(ff.labels, "label", "only runs with label k=v (repeatable)")
	fs.DurationVar(&ff.since, "since", 0, "only runs started within this long ago")
	fs.BoolVar(&ff.f.ExcludeThrottled, "exclude-throttled", false, "leave out runs during which the device throttled")
}

func (ff *filterFlags) filter() collector.Filter {
	f := ff.f
	f.Labels = ff.labels
	if ff.since > 0 {
		f.Since = time.Now().Add(-ff.since)
	}
	return f
}

func cmdDevices(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("devices", "edgebench-collector devices [flags]", env.Stderr)
	var db string
	dbVar(fs, env, &db)
	asJSON := fs.Bool("json", false, "JSON instead of a table")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	s, err := openDB(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	devs, err := s.Devices(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(devs)
	}
	collector.MakePrintable(devs)
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLEET\tDEVICE\tSTATE\tBOARD\tOS\tLABELS\tLAST SEEN\tLAST RUN")
	for _, d := range devs {
		board, osName := "-", "-"
		if d.Info != nil {
			board, osName = orDash(d.Info.Board), orDash(d.Info.OS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Fleet, d.ID, orDash(d.State), board, osName, orDash(collector.LabelString(d.Labels)),
			when(d.LastSeen), orDash(d.LastResult))
	}
	return tw.Flush()
}

func cmdRuns(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("runs", "edgebench-collector runs [flags]", env.Stderr)
	var ff filterFlags
	addFilterFlags(fs, env, &ff)
	fs.IntVar(&ff.f.Limit, "limit", 20, "newest N results (0: all)")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	s, err := openDB(ctx, ff.db)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Runs(ctx, ff.filter())
	if err != nil {
		return err
	}
	collector.MakePrintable(rows)
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tDEVICE\tSTARTED\tOUTCOME\tSPEC\tLABELS\tN\tREQ/S\tP50\tP99\tERRORS\tCPU %\tFLAGS")
	for _, r := range rows {
		flags := ""
		if r.Throttled {
			flags = "throttled"
		}
		figures := fmt.Sprintf("%s\t%s\t%s\t%d\t%s", num(r.RPS), lat(r.P50US), lat(r.P99US), r.Errors, num(r.CPUPct))
		outcome := r.Outcome
		if r.Outcome != string(wire.StateSucceeded) { // no figure of work that failed: why instead
			figures = "-\t-\t-\t-\t-"
			if r.Reason != "" {
				outcome += ": " + r.Reason
			}
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Fleet, r.Device, r.Started.Format("2006-01-02 15:04:05"),
			outcome, r.Spec, orDash(collector.LabelString(r.Labels)), r.Runs, figures, flags)
	}
	return tw.Flush()
}

func cmdShow(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("show", "edgebench-collector show RUN [flags] (RUN: an id, a unique prefix of one, or last)", env.Stderr)
	var db string
	dbVar(fs, env, &db)
	format := fs.String("format", "edgebench", "report: edgebench, ab, wrk or json")
	idx := fs.Int("run", -1, "only this repetition (from 0); default all")
	rest, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return cli.Usagef("want one RUN: edgebench-collector show RUN")
	}
	switch *format {
	case "edgebench", "ab", "wrk", "json":
	default:
		return cli.Usagef("--format %q: want edgebench, ab, wrk or json", *format)
	}
	s, err := openDB(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := s.ResultIDPrefix(ctx, rest[0])
	if err != nil {
		return err
	}
	res, err := s.Result(ctx, id)
	if err != nil {
		return err
	}
	if *idx >= len(res.Runs) {
		return cli.Usagef("--run %d: result %s has runs 0 to %d", *idx, id, len(res.Runs)-1)
	}
	return writeShow(env.Stdout, res, *format, *idx)
}

// writeShow writes a result's report: its spec, the device, then per run
// (or only run only) the load report and the System section.
func writeShow(w io.Writer, res *wire.Result, format string, only int) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	collector.MakePrintable(res)
	fmt.Fprintf(w, "result %s  %s/%s  %s  %s  %s\n", res.ID, res.Fleet, res.Device, res.CreatedAt.Local().Format(time.RFC3339),
		res.Outcome, collector.LabelString(res.Labels))
	if res.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", res.Reason)
	}
	fmt.Fprintf(w, "spec: %s\n", collector.SpecOf(res.Spec))
	fp := res.Fingerprint
	fmt.Fprintf(w, "device: %s, %s, kernel %s, %s", orDash(fp.Board), orDash(fp.OS), orDash(fp.Kernel), orDash(fp.Arch))
	if fp.Throttled || fp.FreqDropped {
		fmt.Fprint(w, "  THROTTLED")
	}
	fmt.Fprintln(w)
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
		lr, err := collector.LoadResult(run, res.Spec)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		switch format {
		case "ab":
			err = report.WriteAB(w, lr, report.ABOptions{})
		case "wrk":
			err = report.WriteWrk(w, lr, report.WrkOptions{Latency: true})
		default:
			err = report.WriteText(w, lr)
		}
		if err != nil {
			return err
		}
		if run.System != nil {
			fmt.Fprintln(w)
			if err := collector.SystemReport(run.System).WriteText(w); err != nil {
				return err
			}
		}
	}
	if rp := res.Repeat; rp != nil {
		fmt.Fprintf(w, "\n%d runs: req/s %.2f ± %.2f (95 %% CI %.2f .. %.2f), rsd %.2f %%\n", rp.Runs, rp.RPS.Mean, rp.RPS.StdDev, rp.RPS.CILow, rp.RPS.CIHigh, rp.RSDPct)
	}
	return nil
}

func cmdCompare(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("compare", "edgebench-collector compare --by device|LABEL|FIELD [flags]", env.Stderr)
	var ff filterFlags
	addFilterFlags(fs, env, &ff)
	by := fs.String("by", "device", "group by device, a run label (server, build ...) or a system-info field (board, os, kernel, arch, cpu_governor ...)")
	metric := fs.String("metric", "rps,p50,p99", "figures to test, comma-separated: "+strings.Join(collector.MetricNames(), ", "))
	base := fs.String("base", "", "the group the others are compared to (default the first seen)")
	format := fs.String("format", "text", "text or json")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return cli.Usagef("--format %q: want text or json", *format)
	}
	metrics := strings.Split(*metric, ",")
	for _, m := range metrics {
		if _, ok := collector.MetricByName(m); !ok {
			return cli.Usagef("--metric %q: want %s", m, strings.Join(collector.MetricNames(), ", "))
		}
	}
	s, err := openDB(ctx, ff.db)
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := s.Compare(ctx, collector.CompareOptions{By: *by, Metrics: metrics, Base: *base, Filter: ff.filter()})
	var qe *collector.QueryError
	if errors.As(err, &qe) {
		return cli.Usagef("%s", qe.Msg)
	}
	if err != nil {
		return err
	}
	if *format == "json" {
		return c.WriteJSON(env.Stdout)
	}
	return c.WriteText(env.Stdout)
}

func cmdExport(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("export", "edgebench-collector export --format csv|json|benchfmt [flags]", env.Stderr)
	var ff filterFlags
	addFilterFlags(fs, env, &ff)
	format := fs.String("format", "csv", "csv, json or benchfmt (Go benchmark lines for benchstat)")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	switch *format {
	case "csv", "json", "benchfmt":
	default:
		return cli.Usagef("--format %q: want csv, json or benchfmt", *format)
	}
	s, err := openDB(ctx, ff.db)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Export(ctx, env.Stdout, *format, ff.filter())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func lat(us float64) string {
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
