package main

import (
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen/report"
)

// addModeFlags adds to the flags of the tool a mode stands in for (ab,
// wrk) what that tool lacks: labels, publishing, repetitions, run's JSON
// and the machine's figures.
func addModeFlags(fs *cli.FlagSet, rf *runFlags, getenv func(string) string, tool string) {
	fs.Var(cli.Pairs(rf.labels), "label", "label k=v attached to the result (repeatable)")
	fs.IntVar(&rf.repeat, "repeat", 1, "run N times, each with its report, then the spread of req/s, p50 and p99")
	fs.StringVar(&rf.format, "format", tool, tool+"'s report, or json (the JSON of edgebench run)")
	fs.BoolVar(&rf.noProbe, "no-system", false, "leave out the System section (the machine is not sampled)")
	fs.BoolVar(&rf.noProbe, "no-probe", false, "the same as --no-system (its name in edgebench run)")
	watchFlag(fs, &rf.watches, "process `NAME|PID` of the server's the System section reports and counts as the server's, a NAME meaning all of that name (repeatable; always watched: the server on the target's port with its workers and upstreams, and this run)")
	rf.publish = addPublishFlags(fs, getenv)
}

// checkMode checks what addModeFlags added, and the URL.
func (rf *runFlags) checkMode(tool string) error {
	if rf.format != tool && rf.format != "json" {
		return cli.Usagef("--format %q: want %s or json", rf.format, tool)
	}
	return rf.checkCommon()
}

// checkCommon checks what every load test command takes: the number of
// repetitions and the URL.
func (rf *runFlags) checkCommon() error {
	if rf.repeat < 1 || rf.repeat > 1000 {
		return cli.Usagef("--repeat %d: want 1..1000", rf.repeat)
	}
	if _, err := report.ParseTarget(rf.url); err != nil {
		return cli.Usagef("%v", err)
	}
	return nil
}
