package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestABErrorOnItsOwnLine: in ab mode, a run that fails before its report
// (nothing listens) ends the "(be patient)..." line before the error, so
// that in a terminal, where stdout and stderr mix, the error reads on a
// line of its own rather than glued to the progress line.
func TestABErrorOnItsOwnLine(t *testing.T) {
	addr := testenv.FreeAddr(t) // nothing listens there
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "."), "ab", "-n", "10", "http://"+addr+"/")
	var both bytes.Buffer // one stream, as a terminal shows them
	cmd.Stdout, cmd.Stderr = &both, &both
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s", err, both.String())
	}
	lines := strings.Split(strings.TrimRight(both.String(), "\n"), "\n")
	if len(lines) < 2 || lines[len(lines)-2] != "Benchmarking 127.0.0.1 (be patient)..." ||
		lines[len(lines)-1] != "edgebench ab: connection refused: "+addr {
		t.Errorf("the error is not on a line of its own:\n%s", both.String())
	}
}
