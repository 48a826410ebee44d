package main

import (
	"io"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/cli"
)

// TestHelpGoesToStdout: help asked for is the output of the command, so
// "edgebench run -h | grep rate" finds the flag: every command, -h and
// --help, prints its usage on stdout, nothing on stderr, and exits 0.
func TestHelpGoesToStdout(t *testing.T) {
	for _, c := range program().Subcommands {
		for _, h := range []string{"-h", "--help"} {
			r := runBinary(t, c.Name, h)
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: edgebench "+c.Name) {
				t.Errorf("edgebench %s %s: exit %d, stdout %q, stderr %q; want 0, the usage on stdout and nothing on stderr", c.Name, h, r.code, r.stdout, r.stderr)
			}
		}
	}
	if r := runBinary(t, "run", "-h"); !strings.Contains(r.stdout, "--rate") {
		t.Errorf("edgebench run -h lists no --rate:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		if r := runBinary(t, args...); r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: edgebench COMMAND") {
			t.Errorf("edgebench %s: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	// Not asked for: the usage is the complaint, on stderr, exit 2.
	if r := runBinary(t); r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "usage: edgebench COMMAND") {
		t.Errorf("edgebench alone: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestNoProbeNoSystem: --no-probe (run) and --no-system (ab, wrk) are one
// switch; each command takes both names.
func TestNoProbeNoSystem(t *testing.T) {
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	const u = "http://127.0.0.1:8080/"
	for _, name := range []string{"--no-probe", "--no-system"} {
		rf, err := parseRunFlags([]string{name, u}, io.Discard, env.Getenv)
		if err != nil || !rf.noProbe {
			t.Errorf("run %s: %v", name, err)
		}
		rf, _, err = parseABFlags([]string{name, "-n", "10", u}, env)
		if err != nil || !rf.noProbe {
			t.Errorf("ab %s: %v", name, err)
		}
		rf, err = parseWrkFlags([]string{name, u}, env)
		if err != nil || !rf.noProbe {
			t.Errorf("wrk %s: %v", name, err)
		}
	}
}
