package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
)

// Env is what a command may touch of the process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Subcommand is one subcommand of a Program.
type Subcommand struct {
	Name    string // "run"
	Args    string // what follows the name in the usage: "URL [flags]"
	Summary string // one line
	Run     func(ctx context.Context, env *Env, args []string) error
}

// Program is a binary made of subcommands.
type Program struct {
	Name        string       // the binary's name, first word of every message
	Version     string       // printed by the built-in version command
	Subcommands []Subcommand // in the order the usage lists them
}

// UsageError is a bad flag, argument or value: the program prints it as one
// line and exits with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// ExitError ends the program with Code, after printing Msg as one line
// when it is not empty.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// ErrHelp is returned by a command that printed what was asked for
// (--version of a mode): exit status 0.
var ErrHelp = errors.New("help requested")

// HelpError is returned by FlagSet.Parse when -h or --help asked for the
// usage: the Program prints it on stdout (help asked for is the output,
// so that "edgebench run -h | grep rate" finds it) and exits 0. It is
// ErrHelp for errors.Is. The FlagSet is the command's one definition of
// its flags, which the manual pages and completions are made from too.
type HelpError struct{ FlagSet *FlagSet }

func (e *HelpError) Error() string { return ErrHelp.Error() }

// Is makes a HelpError ErrHelp.
func (e *HelpError) Is(target error) bool { return target == ErrHelp }

// Main runs the program on the process's arguments and exits with its
// status; SIGINT and SIGTERM cancel the command's context.
func (p *Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := p.Run(ctx, &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// Run runs the command args[0] with the rest of args and returns the exit
// status, having printed any error as one line on env.Stderr.
func (p *Program) Run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		p.printUsage(env.Stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help", "help":
		if len(args) > 1 && name == "help" {
			if c := p.command(args[1]); c != nil {
				return p.Run(ctx, env, []string{c.Name, "--help"})
			}
		}
		p.printUsage(env.Stdout)
		return 0
	case "--version", "-version":
		name = "version"
	}
	c := p.command(name)
	if c == nil {
		msg := fmt.Sprintf("%s: unknown command %q", p.Name, name)
		if s := closest(name, p.names()); s != "" {
			msg += "; did you mean " + s + "?"
		} else {
			msg += " (try '" + p.Name + " help')"
		}
		fmt.Fprintln(env.Stderr, msg)
		return 2
	}
	err := c.Run(ctx, env, args[1:])
	var ue *UsageError
	var ee *ExitError
	var he *HelpError
	switch {
	case errors.As(err, &he):
		he.FlagSet.PrintUsage(env.Stdout)
		return 0
	case err == nil, errors.Is(err, ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "%s %s: %s\n", p.Name, c.Name, ue.Msg)
		return 2
	case errors.As(err, &ee):
		if ee.Msg != "" {
			fmt.Fprintf(env.Stderr, "%s %s: %s\n", p.Name, c.Name, ee.Msg)
		}
		return ee.Code
	default:
		fmt.Fprintf(env.Stderr, "%s %s: %v\n", p.Name, c.Name, err)
		return 1
	}
}

// commands are the program's commands and, with a Version, "version".
func (p *Program) commands() []Subcommand {
	cmds := p.Subcommands
	if p.Version != "" {
		cmds = append(cmds[:len(cmds):len(cmds)], Subcommand{Name: "version", Summary: "print the version",
			Run: func(_ context.Context, env *Env, args []string) error {
				if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
					_, err := fmt.Fprintf(env.Stdout, "usage: %s version\n\nprints the version\n", p.Name)
					return err
				}
				if len(args) > 0 {
					return Usagef("unexpected argument %q", args[0])
				}
				_, err := fmt.Fprintf(env.Stdout, "%s %s\n", p.Name, p.Version)
				return err
			}})
	}
	return cmds
}

func (p *Program) command(name string) *Subcommand {
	for _, c := range p.commands() {
		if c.Name == name {
			return &c
		}
	}
	return nil
}

func (p *Program) names() []string {
	var n []string
	for _, c := range p.commands() {
		n = append(n, c.Name)
	}
	return n
}

func (p *Program) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s COMMAND [flags]\n\n", p.Name)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, c := range p.commands() {
		fmt.Fprintf(tw, "  %s %s\t%s\n", c.Name, c.Args, c.Summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n'%s COMMAND -h' lists the flags of a command.\n", p.Name)
}
