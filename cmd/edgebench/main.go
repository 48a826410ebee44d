// Command edgebench is the device binary: it load-tests a local HTTP server,
// serves a built-in target, samples the machine and runs as an MQTT agent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags '-X main.version=...'.
var version = "dev"

// command is one subcommand: it parses args and does its work.
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
		"run":     {cmdRun, "run URL [flags]       load-test URL and print a report"},
		"serve":   {cmdServe, "serve [flags]         serve the built-in target"},
		"probe":   {cmdProbe, "probe [flags]         print a live table of the machine's figures"},
		"agent":   {cmdAgent, "agent [flags]         run the MQTT daemon"},
		"info":    {cmdInfo, "info                  print this device's system info"},
		"version": {cmdVersion, "version               print the version"},
	}
}

// usageError marks a bad flag, argument or URL: one line, exit status 2.
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
		fmt.Fprintf(env.stderr, "edgebench: unknown command %q (try 'edgebench help')\n", args[0])
		return 2
	}
	err := cmd.run(ctx, env, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(env.stderr, "edgebench %s: %s\n", args[0], ue.msg)
		return 2
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintf(env.stderr, "edgebench %s: %s\n", args[0], ee.msg)
		}
		return ee.code
	default:
		fmt.Fprintf(env.stderr, "edgebench %s: %v\n", args[0], err)
		return 1
	}
}

// exitError ends the process with a status other than 1, or quietly.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func printUsage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: edgebench COMMAND [flags]")
	fmt.Fprintln(w)
	for _, name := range []string{"run", "serve", "probe", "agent", "info", "version"} {
		fmt.Fprintln(w, "  "+cmds[name].usage)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "'edgebench COMMAND -h' lists the flags of a command.")
}

func cmdVersion(ctx context.Context, env *cliEnv, args []string) error {
	fmt.Fprintf(env.stdout, "edgebench %s\n", version)
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

// parse parses args: a bad flag becomes a usage error, -h prints the usage
// and returns flag.ErrHelp (exit status 0).
func (fs *flagSet) parse(args []string) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(fs.stderr, "usage: %s\n\n", fs.usage)
		fs.SetOutput(fs.stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		return err
	default:
		return usagef("%v", err)
	}
}
