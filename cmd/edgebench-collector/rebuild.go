package main

import (
	"context"
	"fmt"
	"time"

	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/internal/cli"
)

func cmdRebuildSeries(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("rebuild-series", "edgebench-collector rebuild-series [--min-pct 5] [flags]", env.Stdout)
	var db dbFlag
	dbVar(fs, env, &db)
	var d struct {
		minPct, minNoise, alpha         float64
		window, minBefore, maxBefore, n int
	}
	fs.Float64Var(&d.minPct, "min-pct", 5, "the smallest change found, % of the figure before")
	fs.Float64Var(&d.minNoise, "min-noise", 1.5, "the smallest change found, in units of the noise before it")
	fs.Float64Var(&d.alpha, "alpha", 0.01, "the rank test's level")
	fs.IntVar(&d.window, "window", 8, "the results after a candidate it is compared on")
	fs.IntVar(&d.minBefore, "min-before", 8, "the results before a change, at least")
	fs.IntVar(&d.maxBefore, "max-before", 30, "the results before a candidate it is compared on, at most")
	fs.IntVar(&d.n, "min-after", 4, "the results after a change before it is claimed, at least")
	restart := fs.Bool("restart", false, "start over even when a rebuild with the same options is under way")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	switch {
	case d.minPct <= 0 || d.minNoise <= 0:
		return cli.Usagef("--min-pct and --min-noise must be positive")
	case d.alpha <= 0 || d.alpha >= 1:
		return cli.Usagef("--alpha must be between 0 and 1")
	case d.minBefore < 2 || d.n < 2 || d.maxBefore < d.minBefore || d.window < d.n:
		return cli.Usagef("want --min-before and --min-after of at least 2, --max-before at least --min-before, --window at least --min-after")
	case d.maxBefore > 1000 || d.window > 1000:
		return cli.Usagef("--max-before and --window must be at most 1000")
	}
	s, err := openDB(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	was, err := s.SeriesRebuildState(ctx)
	if err != nil {
		return err
	}
	o := seriesdb.RebuildOptions{Restart: *restart}
	opts := was.Detect.Filled()
	for name, set := range map[string]func(){
		"min-pct": func() { opts.MinPct = d.minPct }, "min-noise": func() { opts.MinNoise = d.minNoise }, "alpha": func() { opts.Alpha = d.alpha },
		"window": func() { opts.Window = d.window }, "min-before": func() { opts.MinBefore = d.minBefore },
		"max-before": func() { opts.MaxBefore = d.maxBefore }, "min-after": func() { opts.MinAfter = d.n },
	} {
		if fs.Changed(name) {
			set()
		}
	}
	if opts != was.Detect.Filled() {
		o.Detect = &opts
	}
	start, last := time.Now(), time.Now()
	p, err := s.RebuildSeries(ctx, o, func(p seriesdb.RebuildProgress) {
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			fmt.Fprintf(env.Stderr, "%d devices, %d results so far\n", p.Devices, p.Results)
		}
	})
	if err != nil {
		return fmt.Errorf("%w (run it again to go on from there)", err)
	}
	resumed := ""
	if p.Resumed {
		resumed = ", went on from the rebuild under way"
	}
	fmt.Fprintf(env.Stdout, "rebuilt %d series of %d devices from %d results in %v%s: %d changes (not alerted)\n",
		p.Series, p.Devices, p.Results, time.Since(start).Round(time.Millisecond), resumed, p.Changes)
	return nil
}
