package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func testProgram() *Program {
	return &Program{Name: "tool", Version: "1.2.3", Subcommands: []Subcommand{
		{Name: "run", Args: "URL [flags]", Summary: "run it", Run: func(_ context.Context, env *Env, args []string) error {
			fs := NewFlagSet("run", "tool run [flags] URL", env.Stderr)
			code := fs.Int("exit", 0, "exit with this status")
			rest, err := fs.Parse(args)
			switch {
			case err != nil:
				return err
			case len(rest) != 1:
				return Usagef("want one URL")
			case *code == 3:
				return &ExitError{Code: 3, Msg: "three"}
			case *code == 4:
				return &ExitError{Code: 4}
			case *code == 1:
				return errors.New("it failed")
			}
			env.Stdout.Write([]byte("ran " + rest[0] + "\n"))
			return nil
		}},
		{Name: "serve", Args: "[flags]", Summary: "serve", Run: func(context.Context, *Env, []string) error { return nil }},
	}}
}

func TestProgramExitStatuses(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string // stderr: its first line, or all of it when one line
	}{
		{[]string{"run", "u"}, 0, "ran u\n", ""},
		{[]string{"run", "--exit=1", "u"}, 1, "", "tool run: it failed\n"},
		{[]string{"run", "-exit", "3", "u"}, 3, "", "tool run: three\n"},
		{[]string{"run", "--exit", "4", "u"}, 4, "", ""},
		{[]string{"run"}, 2, "", "tool run: want one URL\n"},
		{[]string{"run", "--exot", "1", "u"}, 2, "", "tool run: unknown flag --exot; did you mean --exit?\n"},
		{[]string{"run", "--exit", "x", "u"}, 2, "", "tool run: --exit \"x\": want a whole number\n"},
		{[]string{"run", "-h"}, 0, "usage: tool run [flags] URL\n\n      --exit int   exit with this status\n", ""},
		{[]string{"run", "--help"}, 0, "usage: tool run [flags] URL\n\n      --exit int   exit with this status\n", ""},
		{[]string{"help", "run"}, 0, "usage: tool run [flags] URL\n\n      --exit int   exit with this status\n", ""},
		{[]string{"rnu"}, 2, "", "tool: unknown command \"rnu\"; did you mean run?\n"},
		{[]string{"nothing"}, 2, "", "tool: unknown command \"nothing\" (try 'tool help')\n"},
		{nil, 2, "", "usage: tool COMMAND [flags]\n"},
		{[]string{"help"}, 0, programUsage, ""},
		{[]string{"--help"}, 0, programUsage, ""},
		{[]string{"-h"}, 0, programUsage, ""},
		{[]string{"version"}, 0, "tool 1.2.3\n", ""},
		{[]string{"--version"}, 0, "tool 1.2.3\n", ""},
		{[]string{"version", "x"}, 2, "", "tool version: unexpected argument \"x\"\n"},
		{[]string{"version", "-h"}, 0, "usage: tool version\n\nprints the version\n", ""},
		{[]string{"version", "--help"}, 0, "usage: tool version\n\nprints the version\n", ""},
	} {
		var stdout, stderr bytes.Buffer
		code := testProgram().Run(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}, tc.args)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if stderr.Len() > 0 {
			first += "\n"
		}
		if code != tc.code || stdout.String() != tc.stdout || first != tc.stderr {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
		if tc.code == 2 && len(tc.args) > 0 && strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: a usage mistake takes one line, got %q", tc.args, stderr.String())
		}
	}
}

// programUsage is testProgram's usage: help asked for goes to stdout.
const programUsage = "usage: tool COMMAND [flags]\n\n" +
	"  run URL [flags]   run it\n" +
	"  serve [flags]     serve\n" +
	"  version           print the version\n\n" +
	"'tool COMMAND -h' lists the flags of a command.\n"

func TestProgramUsageListsCommandsInOrder(t *testing.T) {
	var stdout bytes.Buffer
	testProgram().Run(context.Background(), &Env{Stdout: &stdout, Stderr: io.Discard}, []string{"help"})
	if stdout.String() != programUsage {
		t.Errorf("usage:\n%s\nwant:\n%s", stdout.String(), programUsage)
	}
}
