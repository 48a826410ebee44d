package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/probe"
)

// probeFlags is what `edgebench probe` accepts.
type probeFlags struct {
	interval time.Duration
	count    int
	root     string
	format   string
	once     bool
	watches  []probe.Watch
}

// watchFlag defines the repeatable --watch NAME|PID flag on fs.
func watchFlag(fs *cli.FlagSet, watches *[]probe.Watch, usage string) {
	fs.Func("watch", usage, func(s string) error {
		if s == "" {
			return errors.New("want a process name or PID")
		}
		*watches = append(*watches, probe.ParseWatch(s))
		return nil
	})
}

func cmdProbe(ctx context.Context, env *cli.Env, args []string) error {
	pf := probeFlags{}
	fs := cli.NewFlagSet("probe", "edgebench probe [--interval 1s] [--count N] [--once] [--format table|csv|json] [--watch NAME|PID] [--root DIR]", env.Stderr)
	fs.DurationVar(&pf.interval, "interval", time.Second, "time between lines")
	fs.IntVar(&pf.count, "count", 0, "stop after N lines (0: until interrupted)")
	fs.StringVar(&pf.root, "root", "/", "read proc/ and sys/ below this folder")
	fs.StringVar(&pf.format, "format", "table", "table, csv or json (one sample per line)")
	fs.BoolVar(&pf.once, "once", false, "print one line (one interval) and exit")
	watchFlag(fs, &pf.watches, "process `NAME|PID` to report (repeatable)")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	switch {
	case pf.interval < 10*time.Millisecond:
		return cli.Usagef("--interval %v: want at least 10ms", pf.interval)
	case pf.count < 0:
		return cli.Usagef("--count %d: want 0 or more", pf.count)
	case pf.format != "table" && pf.format != "csv" && pf.format != "json":
		return cli.Usagef("--format %q: want table, csv or json", pf.format)
	}
	if pf.once {
		pf.count = 1
	}
	return runProbe(ctx, env.Stdout, pf)
}

func runProbe(ctx context.Context, stdout io.Writer, pf probeFlags) error {
	p := probe.New(pf.root)
	defer p.Close()
	p.SetWatches(pf.watches)
	if _, err := p.Sample(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 4096)
	lw := probe.NewLineWriter(w, pf.format, pf.watches)
	t := time.NewTicker(pf.interval)
	defer t.Stop()
	for n := 0; pf.count == 0 || n < pf.count; n++ {
		select {
		case <-ctx.Done():
			return w.Flush()
		case <-t.C:
		}
		s, err := p.Sample()
		if s == nil {
			return err
		}
		// A source that fails (a file unreadable) leaves its columns "-":
		// the table goes on.
		if err := lw.Write(s); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}
