package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/series"
	"github.com/edgebench/edgebench/internal/cli"
)

func cmdChanges(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("changes", "edgebench-collector changes [--since 7d] [flags]", env.Stdout)
	var db dbFlag
	dbVar(fs, env, &db)
	var o series.Options
	fs.StringVar(&o.Fleet, "fleet", "", "only this fleet")
	fs.StringVar(&o.Device, "device", "", "only this device")
	since := fs.String("since", "7d", "changes within this long ago, e.g. 7d, 36h; 0: all")
	fs.Float64Var(&o.Detect.MinPct, "min-pct", 5, "the smallest change reported, % of the figure before")
	asJSON := fs.Bool("json", false, "JSON instead of text")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	d, err := parseSince(*since)
	if err != nil {
		return cli.Usagef("--since %q: %v", *since, err)
	}
	if o.Detect.MinPct <= 0 {
		return cli.Usagef("--min-pct must be positive")
	}
	if d > 0 {
		o.Since = time.Now().Add(-d)
	}
	s, err := openDB(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	cs, err := series.Changes(ctx, s, o)
	if err != nil {
		return err
	}
	if *asJSON {
		if cs == nil {
			cs = []series.Change{}
		}
		return writeIndented(env.Stdout, cs)
	}
	writeChanges(env.Stdout, cs)
	return nil
}

// parseSince reads a duration that may count days: 7d, 36h, 90m.
func parseSince(s string) (time.Duration, error) {
	var n float64
	if _, err := fmt.Sscanf(s, "%gd", &n); err == nil && len(s) > 1 && s[len(s)-1] == 'd' {
		if n < 0 {
			return 0, fmt.Errorf("want a positive duration")
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := cli.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 7d, 36h or 90m")
	}
	return d, nil
}

func writeChanges(w io.Writer, cs []series.Change) {
	if len(cs) == 0 {
		fmt.Fprintln(w, "no change")
		return
	}
	last := ""
	for _, c := range cs {
		if c.Series != last {
			fmt.Fprintf(w, "%s\n", escape.Printable(c.Series))
			last = c.Series
		}
		ci := ""
		if !math.IsNaN(c.LowPct) {
			ci = fmt.Sprintf(" [%+.1f%% %+.1f%%]", c.LowPct, c.HighPct)
		}
		verdict := "better"
		if c.Worse() {
			verdict = "worse"
		}
		fmt.Fprintf(w, "  %s  %-12s %s -> %s  %+.1f%%%s %s (p=%.3f, %d results before, %d after)  from result %s\n",
			c.At.UTC().Format("2006-01-02 15:04"), c.Metric, changeNum(c.Before), changeNum(c.After), c.Pct, ci, verdict, c.P,
			len(c.BeforeIDs), len(c.AfterIDs), c.ResultID)
		for _, a := range c.Also {
			fmt.Fprintf(w, "      also: %s\n", a)
		}
	}
}

func changeNum(v float64) string {
	switch {
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
