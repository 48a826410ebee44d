package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestDemoEndsOnAComparison runs scripts/demo.sh (make demo) on free
// ports: it must end on one table of one spec with both boards, each
// with an interval (6 runs, not ±∞), and their difference with its
// verdict. The demo's two agents used to test different URLs: two
// tables of one group each, nothing compared.
func TestDemoEndsOnAComparison(t *testing.T) {
	colBin, agentBin := fleetBinaries(t)
	bin := t.TempDir()
	for name, path := range map[string]string{"edgebench-collector": colBin, "edgebench": agentBin} {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../scripts/demo.sh")
	cmd.Env = append(os.Environ(), "DEMO_BIN="+bin, "DEMO_BROKER="+testenv.FreeAddr(t), "DEMO_WEB="+testenv.FreeAddr(t),
		"DEMO_TARGET="+testenv.FreeAddr(t), "DEMO_NGINX="+testenv.FreeAddr(t))
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	_, last, ok := strings.Cut(out, "== comparison by board")
	if !ok {
		t.Fatalf("no comparison at the end:\n%s", out)
	}
	last, two, ok := strings.Cut(last, "\n== two machines: ")
	if !ok {
		// Where the machine does not allow a namespace, the demo says why.
		if !strings.Contains(last, "\n== no comparison across two machines here: ") {
			t.Errorf("no comparison across two machines, and no word why:\n%s", out)
		}
		last, _, _ = strings.Cut(last, "\n== no comparison across two machines here: ")
	} else {
		checkDemoTwoMachines(t, two)
		t.Log("\n== two machines: " + two)
	}
	if n := strings.Count(last, "\nspec: "); n != 1 || strings.Contains(last, "specs:") {
		t.Errorf("the comparison has %d tables, want one spec:\n%s", n, last)
	}
	for _, board := range []string{"pi4", "pi5"} {
		if !regexp.MustCompile(`(?m)^\s+` + board + `\s+6\??\s+\d+\.\d+ ±\d+\.\d%`).MatchString(last) {
			t.Errorf("no row of 6 runs with an interval for %s:\n%s", board, last)
		}
	}
	if strings.Contains(last, "±∞") || !regexp.MustCompile(`(?m)^vs pi4\s`).MatchString(last) ||
		!regexp.MustCompile(`(?m)^pi5\s+(~|[+-]\d)`).MatchString(last) {
		t.Errorf("no difference with its verdict:\n%s", last)
	}
	t.Log("\n" + last)
}

// checkDemoTwoMachines checks the demo's comparison across two machines:
// the namespace's nginx loaded by its own agent (local) and from this side
// (remote, loaded from another device), each a row of 6 runs, side by
// side with req/s and the server's CPU per request, and each run's
// verdict.
func checkDemoTwoMachines(t *testing.T, out string) {
	t.Helper()
	if !strings.Contains(out, "result ") || !strings.Contains(out, "of demo/pi-t, loaded from demo/pi-a") {
		t.Errorf("the run across two machines did not land under pi-t:\n%s", out)
	}
	for _, where := range []string{"local", "remote"} {
		if !regexp.MustCompile(`(?m)^\s+` + where + `\s+6\??\s+\d+\.\d+ ±`).MatchString(out) {
			t.Errorf("no row of 6 runs for %s:\n%s", where, out)
		}
		if !regexp.MustCompile(`(?m)^` + where + `\s+\d+\.\d+\s+\d+\.\d+\s+\d+\.\d us$`).MatchString(out) {
			t.Errorf("no side-by-side row of %s (req/s, server CPU %%, per request):\n%s", where, out)
		}
		if n := len(regexp.MustCompile(`(?m)^`+where+`: (NOT VALID, )?limited by `).FindAllString(out, -1)); n != 6 {
			t.Errorf("%d verdicts of %s, want one per run (6):\n%s", n, where, out)
		}
	}
	if !strings.Contains(out, "· loaded from another device") {
		t.Errorf("the remote runs' spec does not say they were loaded from another device:\n%s", out)
	}
}
