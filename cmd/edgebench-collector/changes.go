package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/internal/cli"
)

func cmdChanges(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("changes", "edgebench-collector changes [--since 7d] [flags]", env.Stdout)
	var db dbFlag
	dbVar(fs, env, &db)
	var q seriesdb.ChangeQuery
	fs.StringVar(&q.Fleet, "fleet", "", "only this fleet")
	fs.StringVar(&q.Device, "device", "", "only this device")
	since := fs.String("since", "7d", "changes within this long ago, e.g. 7d, 36h; 0: all")
	minPct := fs.Float64("min-pct", 5, "only the changes of at least this much, % of the figure before (the store finds them from its own floor: rebuild-series --min-pct)")
	fs.IntVar(&q.Limit, "limit", seriesdb.DefaultChangesLimit, fmt.Sprintf("the changes listed at most, from 1 to %d (the latest first); the next page's --cursor follows", seriesdb.MaxChangesLimit))
	fs.StringVar(&q.Cursor, "cursor", "", "list from there: the cursor a page before ended with")
	final := fs.Bool("final", false, "only the final changes, not the provisional claims (windows not full yet)")
	asJSON := fs.Bool("json", false, "JSON instead of text")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	d, err := parseSince(*since)
	if err != nil {
		return cli.Usagef("--since %q: %v", *since, err)
	}
	if *minPct <= 0 {
		return cli.Usagef("--min-pct must be positive")
	}
	if q.Limit < 1 || q.Limit > seriesdb.MaxChangesLimit {
		return cli.Usagef("--limit must be from 1 to %d", seriesdb.MaxChangesLimit)
	}
	if d > 0 {
		q.Since = time.Now().Add(-d)
	}
	s, err := openDB(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	cs, next, err := s.ListChanges(ctx, q)
	if errors.Is(err, seriesdb.ErrBadCursor) {
		return cli.Usagef("--cursor %q: not one a page of changes gave", q.Cursor)
	}
	if err != nil {
		return err
	}
	if q.Cursor == "" && !*final {
		prov, more, err := s.ProvisionalChanges(ctx, q)
		if err != nil {
			return err
		}
		if more {
			fmt.Fprintf(env.Stderr, "more series have a provisional change than the %d listed (--fleet, --device)\n", seriesdb.MaxProvisional)
		}
		cs = append(prov, cs...)
	}
	cs = slices.DeleteFunc(cs, func(c seriesdb.Change) bool { return math.Abs(c.Pct) < *minPct })
	if rb, err := s.SeriesRebuildState(ctx); err == nil {
		if floor := rb.Detect.Filled().MinPct; *minPct < floor {
			fmt.Fprintf(env.Stderr, "the store finds changes of at least %g %%: 'edgebench-collector rebuild-series --min-pct %g' finds smaller ones\n", floor, *minPct)
		}
		if rb.Pending {
			fmt.Fprintf(env.Stderr, "the series are being rebuilt from the stored results (%d devices done): changes may be missing until it ends\n", rb.Devices)
		}
	}
	if *asJSON {
		if cs == nil {
			cs = []seriesdb.Change{}
		}
		if err := writeIndented(env.Stdout, cs); err != nil {
			return err
		}
	} else {
		writeChanges(env.Stdout, cs)
	}
	if next != "" {
		fmt.Fprintf(env.Stderr, "more: --cursor %s\n", next)
	}
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

func writeChanges(w io.Writer, cs []seriesdb.Change) {
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
		prov := ""
		if c.Provisional {
			prov = "  (provisional: its window is not full yet)"
		}
		fmt.Fprintf(w, "  %s  %-12s %s -> %s  %+.1f%%%s %s (p=%.3f, %d results before, %d after)  from result %s%s\n",
			c.At.UTC().Format("2006-01-02 15:04"), c.Metric, changeNum(c.Before), changeNum(c.After), c.Pct, ci, verdict, c.P,
			len(c.BeforeIDs), len(c.AfterIDs), c.ResultID, prov)
		for _, a := range c.Also {
			fmt.Fprintf(w, "      also: %s\n", a)
		}
		if l := c.LeftOutText(); l != "" {
			fmt.Fprintf(w, "      left out: %s\n", l)
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
