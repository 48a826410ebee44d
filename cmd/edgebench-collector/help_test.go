package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestHelpGoesToStdout: every command, -h and --help, prints its usage on
// stdout, nothing on stderr, and exits 0 ("edgebench-collector trigger -h
// | grep duration" finds the flag).
func TestHelpGoesToStdout(t *testing.T) {
	bin := testenv.Binary(t, ".")
	run := func(args ...string) (code int, stdout, stderr string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	for _, c := range program().Subcommands {
		for _, h := range []string{"-h", "--help"} {
			code, stdout, stderr := run(c.Name, h)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: edgebench-collector "+c.Name) {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want 0, the usage on stdout and nothing on stderr", c.Name, h, code, stdout, stderr)
			}
		}
	}
	if _, stdout, _ := run("trigger", "-h"); !strings.Contains(stdout, "-d, --duration duration") {
		t.Errorf("trigger -h lists no -d:\n%s", stdout)
	}
	if code, stdout, stderr := run("help"); code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: edgebench-collector COMMAND") {
		t.Errorf("help: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
