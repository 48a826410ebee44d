// Command edgebench-collector is edgebench's central side: it runs (or
// subscribes to) the MQTT broker, stores the fleet's results in SQLite,
// triggers tests and compares devices, servers and builds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags '-X main.version=...'.
var version = "dev"

// command is one subcommand.
type command struct {
	run   func(ctx context.Context, env *cliEnv, args []string) error
	usage string
}

// cliEnv carries what a subcommand may touch of the process.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

func commands() map[string]command {
	return map[string]command{
		"serve":   {cmdServe, "serve [flags]              broker, store and web UI"},
		"trigger": {cmdTrigger, "trigger [select] URL [flags] run a load test on devices"},
		"devices": {cmdDevices, "devices [flags]            list the devices"},
		"runs":    {cmdRuns, "runs [flags]               list stored results"},
		"show":    {cmdShow, "show RUN [flags]           print a stored result's report"},
		"compare": {cmdCompare, "compare --by KEY [flags]   compare groups of runs"},
		"export":  {cmdExport, "export --format F [flags]  write runs as csv, json or benchfmt"},
		"version": {cmdVersion, "version                    print the version"},
	}
}

// usageError marks a bad flag or argument: one line, exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := realMain(ctx, &cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func realMain(ctx context.Context, env *cliEnv, args []string) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(env.stderr, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "edgebench-collector: unknown command %q (try 'edgebench-collector help')\n", args[0])
		return 2
	}
	err := cmd.run(ctx, env, args[1:])
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(env.stderr, "edgebench-collector %s: %s\n", args[0], ue.msg)
		return 2
	default:
		fmt.Fprintf(env.stderr, "edgebench-collector %s: %v\n", args[0], err)
		return 1
	}
}

func printUsage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: edgebench-collector COMMAND [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintln(w, "  "+cmds[n].usage)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "'edgebench-collector COMMAND -h' lists the flags of a command.")
}

func cmdVersion(ctx context.Context, env *cliEnv, args []string) error {
	fmt.Fprintf(env.stdout, "edgebench-collector %s\n", version)
	return nil
}

// flagSet is a flag.FlagSet that prints nothing on a bad flag (the caller
// prints one line) and its usage on -h.
type flagSet struct {
	*flag.FlagSet
	usage  string
	stderr io.Writer
}

func newFlagSet(name, usage string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{fs, usage, stderr}
}

// parse parses args, letting positional arguments sit between flags, and
// returns them.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var rest []string
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fmt.Fprintf(fs.stderr, "usage: %s\n\n", fs.usage)
			fs.SetOutput(fs.stderr)
			fs.PrintDefaults()
			return nil, flag.ErrHelp
		case err != nil:
			return nil, usagef("%s", strings.TrimSpace(err.Error()))
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// kvValue is a repeatable k=v flag.
type kvValue map[string]string

func (m kvValue) String() string { return "" }

func (m kvValue) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want k=v", s)
	}
	m[k] = v
	return nil
}

// listValue is a repeatable string flag.
type listValue []string

func (l *listValue) String() string { return strings.Join(*l, ",") }

func (l *listValue) Set(s string) error { *l = append(*l, s); return nil }
