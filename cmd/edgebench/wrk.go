package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
)

// parseWrkFlags parses wrk's command line (wrk 4's flags, as typed for
// wrk: -t10 -c500 -d30s --latency), with edgebench's long flags for what
// wrk lacks.
func parseWrkFlags(args []string, env *cli.Env) (*runFlags, error) {
	rf := &runFlags{labels: map[string]string{}, format: "wrk", repeat: 1, probeInterval: time.Second, probeRoot: "/"}
	c := &rf.cfg
	c.Threads, c.Connections = 2, 10
	fs := cli.NewFlagSet("wrk", "edgebench wrk [wrk's flags] URL", env.Stderr)
	fs.VarP((*siCount)(&c.Connections), "connections", "c", "connections to keep open")
	fs.DurationVarP(&c.Duration, "duration", "d", 10*time.Second, "duration of the test")
	fs.VarP((*siCount)(&c.Threads), "threads", "t", "number of threads to use (at most one event loop per CPU runs them)")
	headerFlag(fs, &c.Headers, "add a header `'Name: value'` to the request (repeatable)")
	latency := fs.Bool("latency", false, "print the latency distribution")
	fs.DurationVar(&c.Timeout, "timeout", 2*time.Second, "request timeout: a response that took this long or longer counts as a timeout, as in wrk")
	showVersion := fs.BoolP("version", "v", false, "print the version and exit")
	fs.Refuse("script", "s", true, "Lua scripts are not supported: use -H for headers, and edgebench run for methods (-m), bodies (--body) and open loop (--rate)")
	// wrk2's rate, the first flag a wrk2 user types: its place is run's
	// --rate (open loop), which this wrk 4 mode has not.
	wrk2Rate := fs.StringP("rate", "R", "", "wrk2's rate")
	fs.Lookup("rate").Hidden = true
	addModeFlags(fs, rf, env.Getenv, "wrk")
	// As wrk: no verification of the certificate (--cacert turns it on),
	// and new connections resume a TLS session.
	c.TLS.Insecure = true
	tf := addTLSFlags(fs, c, false)

	rest, err := fs.Parse(args)
	if err != nil {
		return nil, err
	}
	if fs.Changed("rate") {
		return nil, cli.Usagef("wrk2's -R: use edgebench run --rate %s (open loop)", *wrk2Rate)
	}
	if *showVersion {
		fmt.Fprintf(env.Stdout, "edgebench %s in wrk 4 mode (wrk's flags, semantics and report)\n", version)
		return nil, cli.ErrHelp
	}
	switch len(rest) {
	case 0:
		return nil, cli.Usagef("missing URL: edgebench wrk [flags] URL")
	case 1:
		rf.url = rest[0]
	default:
		return nil, cli.Usagef("one URL expected, got %q (wrk passes the rest to a script; edgebench has none)", rest)
	}
	if err := rf.checkMode("wrk"); err != nil {
		return nil, err
	}
	switch {
	case c.Threads <= 0:
		return nil, cli.Usagef("-t %d: want at least 1 thread", c.Threads)
	case c.Connections < c.Threads:
		return nil, cli.Usagef("-c %d: the number of connections must be >= threads (-t %d)", c.Connections, c.Threads)
	case c.Duration <= 0:
		return nil, cli.Usagef("-d 0: want a duration such as 30s")
	case c.Timeout <= 0:
		return nil, cli.Usagef("--timeout 0: want a timeout such as 2s")
	}
	c.URL = rf.url
	c.Dialect = loadgen.DialectWrk
	c.KeepAlive = true
	if err := applyTLSFlags(c, tf, fs); err != nil {
		return nil, err
	}
	c.WholeRequestTimeout = true
	rf.tool = wrkTool(rf, *latency)
	return rf, nil
}

func cmdWrk(ctx context.Context, env *cli.Env, args []string) error {
	rf, err := parseWrkFlags(args, env)
	if err != nil {
		return err
	}
	return runLoadTest(ctx, env, rf)
}

// wrkTool prints wrk's lines: "Running ... test" and the threads before
// the run, its report after.
func wrkTool(rf *runFlags, latency bool) *tool {
	c := rf.cfg
	return &tool{
		before: func(w io.Writer) {
			report.WriteWrkHeader(w, c.Duration, rf.url, c.Threads, c.Connections)
		},
		report: func(w, _ io.Writer, r *report.LoadResult) error {
			return report.WriteWrk(w, r, report.WrkOptions{Latency: latency, NoHeader: true})
		},
	}
}

// siCount is a whole number as wrk reads its counts: 500, or with a unit
// of SI, 1k (1000), 1M, 1G.
type siCount int

// Set implements pflag.Value.
func (v *siCount) Set(s string) error {
	mult := 1
	switch {
	case strings.HasSuffix(strings.ToLower(s), "k"):
		mult = 1000
	case strings.HasSuffix(strings.ToLower(s), "m"):
		mult = 1000_000
	case strings.HasSuffix(strings.ToLower(s), "g"):
		mult = 1000_000_000
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > loadgen.MaxConnections*1000/mult {
		return errors.New("want a whole number such as 500 or 1k")
	}
	*v = siCount(n * mult)
	return nil
}

// String implements pflag.Value.
func (v *siCount) String() string { return strconv.Itoa(int(*v)) }

// Type implements pflag.Value.
func (v *siCount) Type() string { return "count" }
