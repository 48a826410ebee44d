package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// FlagSet is a command's flags, parsed as people type them:
//
//   - a one-letter flag takes its value attached or apart: -c500, -c 500,
//     -c=500, -H'Host: x'; one-letter booleans group: -kq;
//   - a long flag takes one dash or two, its value after = or apart:
//     --timeout=2s, --timeout 2s, -timeout 2s;
//   - a boolean takes =false: -k=false, --no-probe=false;
//   - flags and positional arguments mix in any order; -- ends the flags.
//
// A word after one dash is the long flag of that name when there is one,
// else one-letter flags: -t10 is -t 10, -timeout is --timeout.
//
// An unknown flag, a missing or bad value is a UsageError naming the flag
// (and the closest known one); -h and --help return a *HelpError (it is
// ErrHelp) that carries the FlagSet: the Program prints its usage on stdout.
type FlagSet struct {
	*pflag.FlagSet
	synopsis string
	stderr   io.Writer
	typed    []typedFlag // as typed on the command line, for messages
}

// typedFlag is one flag as it was typed: "-c" with "lots".
type typedFlag struct {
	flag           *pflag.Flag
	spelled, value string
}

// NewFlagSet returns an empty FlagSet for the command name; synopsis is
// the first line of its usage ("edgebench run [flags] URL").
func NewFlagSet(name, synopsis string, stderr io.Writer) *FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return &FlagSet{FlagSet: fs, synopsis: synopsis, stderr: stderr}
}

// Parse parses args and returns the positional arguments, wherever they
// stood among the flags.
func (fs *FlagSet) Parse(args []string) ([]string, error) {
	norm, err := fs.normalize(args)
	if err != nil {
		return nil, err
	}
	err = fs.FlagSet.Parse(norm)
	var (
		ive *pflag.InvalidValueError
		vre *pflag.ValueRequiredError
	)
	switch {
	case err == nil:
		if err := fs.finite(); err != nil {
			return nil, err
		}
		return fs.Args(), nil
	case errors.Is(err, pflag.ErrHelp):
		return nil, &HelpError{FlagSet: fs}
	case errors.As(err, &ive) && errors.As(ive, new(refusal)):
		return nil, Usagef("%s: %v", fs.spelling(ive.GetFlag(), ive.GetValue()), ive.Unwrap())
	case errors.As(err, &ive):
		return nil, Usagef("%s %q: %s", fs.spelling(ive.GetFlag(), ive.GetValue()), ive.GetValue(), wantOf(ive.GetFlag(), ive.Unwrap()))
	case errors.As(err, &vre):
		msg := fs.spelling(vre.GetFlag(), "") + " needs a value"
		if w := valueWord(vre.GetFlag()); w != "a value" {
			msg += ": " + w
		}
		return nil, Usagef("%s", msg)
	default:
		return nil, Usagef("%v", err)
	}
}

// finite refuses NaN and infinities in the number flags given: the
// parser reads them as numbers, and no rate, ratio or threshold is one
// (a NaN passes every comparison's else branch, and JSON has no word for
// it).
func (fs *FlagSet) finite() error {
	var bad error
	fs.FlagSet.Visit(func(f *pflag.Flag) {
		if t := f.Value.Type(); bad != nil || (t != "float64" && t != "float32") {
			return
		}
		if v, err := strconv.ParseFloat(f.Value.String(), 64); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			value := f.Value.String()
			for _, t := range fs.typed {
				if t.flag == f {
					value = t.value
				}
			}
			bad = Usagef("%s %q: want a finite number", fs.spelling(f, value), value)
		}
	})
	return bad
}

// ParseNoArgs parses args, which must all be flags.
func (fs *FlagSet) ParseNoArgs(args []string) error {
	rest, err := fs.Parse(args)
	if err == nil && len(rest) > 0 {
		err = Usagef("unexpected argument %q", rest[0])
	}
	return err
}

// Refuse defines a flag of the tool a command stands in for that makes no
// sense here (ab's -X proxy): giving it is a usage error saying why. It
// takes a value when takesValue, and the usage does not list it.
func (fs *FlagSet) Refuse(name, shorthand string, takesValue bool, why string) {
	f := fs.VarPF(refused(why), name, shorthand, why)
	if !takesValue {
		f.NoOptDefVal = "true"
	}
	f.Hidden = true
}

// Synopsis is the first line of the usage: "edgebench run [flags] URL".
func (fs *FlagSet) Synopsis() string { return fs.synopsis }

// PrintUsage writes the synopsis and the flags.
func (fs *FlagSet) PrintUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s", fs.synopsis, fs.FlagUsages())
}

// normalize rewrites args for pflag, which takes a long name after one
// dash for a group of one-letter flags: "-timeout" becomes "--timeout".
// Walking the arguments as pflag will, it also finds unknown flags (and
// says which known one was meant) and notes how each flag was typed.
func (fs *FlagSet) normalize(args []string) ([]string, error) {
	fs.typed = fs.typed[:0]
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...), nil
		case len(a) < 2 || a[0] != '-':
			out = append(out, a)
			continue
		}
		long := strings.TrimPrefix(a[1:], "-")
		name, value, hasValue := strings.Cut(long, "=")
		var f *pflag.Flag
		var spelled string
		switch {
		case (name == "help" && fs.Lookup("help") == nil) || (a == "-h" && fs.ShorthandLookup("h") == nil):
			out = append(out, "--help")
			continue
		case strings.HasPrefix(a, "--") || (len(name) > 1 && fs.Lookup(name) != nil):
			if f = fs.Lookup(name); f == nil {
				return nil, fs.unknown(a)
			}
			spelled = a[:len(a)-len(long)] + name
			a = "--" + long
		default:
			var err error
			if f, spelled, value, hasValue, err = fs.shorthands(a); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
		switch {
		case hasValue:
		case f.NoOptDefVal != "":
			value = f.NoOptDefVal
		case i+1 < len(args):
			// Taken whatever it looks like, as pflag does: -c -4 is -c=-4.
			i++
			value = args[i]
			out = append(out, value)
		}
		fs.typed = append(fs.typed, typedFlag{f, spelled, value})
	}
	return out, nil
}

// shorthands walks a group of one-letter flags (-k, -kq, -c500, -c=500,
// -k=false) and returns the last one, with its value when it is attached;
// the booleans before it are noted as typed.
func (fs *FlagSet) shorthands(a string) (f *pflag.Flag, spelled, value string, hasValue bool, err error) {
	for j := 1; j < len(a); j++ {
		if f = fs.ShorthandLookup(a[j : j+1]); f == nil {
			return nil, "", "", false, fs.unknown(a)
		}
		spelled, rest := "-"+a[j:j+1], a[j+1:]
		switch {
		case strings.HasPrefix(rest, "="):
			return f, spelled, rest[1:], true, nil
		case f.NoOptDefVal == "":
			return f, spelled, rest, rest != "", nil
		case rest == "":
			return f, spelled, "", false, nil
		}
		fs.typed = append(fs.typed, typedFlag{f, spelled, f.NoOptDefVal})
	}
	panic("unreachable: a is - and at least one letter")
}

// unknown is the error for the unknown flag typed as arg.
func (fs *FlagSet) unknown(arg string) error {
	arg, _, _ = strings.Cut(arg, "=")
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		names = append(names, "--"+f.Name)
		if f.Shorthand != "" {
			names = append(names, "-"+f.Shorthand)
		}
	})
	if s := closest(arg, names); s != "" {
		return Usagef("unknown flag %s; did you mean %s?", arg, s)
	}
	return Usagef("unknown flag %s", arg)
}

// spelling is flag f as the user typed it with value, for a message.
func (fs *FlagSet) spelling(f *pflag.Flag, value string) string {
	for _, t := range fs.typed {
		if t.flag == f && (value == "" || t.value == value) {
			return t.spelled
		}
	}
	if f.Shorthand != "" {
		return "-" + f.Shorthand
	}
	return "--" + f.Name
}

// typeWords name the values of the types whose errors say less than
// their names: pflag's say "must be an integer".
var typeWords = map[string]string{
	"int": "a whole number", "int32": "a whole number", "int64": "a whole number",
	"uint": "a whole number", "uint64": "a whole number",
	"float": "a number", "float32": "a number", "float64": "a number",
	"bool": "true or false", "boolfunc": "true or false",
	"duration": durationWord,
}

// wantOf says what flag f wants, given why its value was refused.
func wantOf(f *pflag.Flag, cause error) string {
	msg := cause.Error()
	if w, ok := typeWords[f.Value.Type()]; ok && !strings.HasPrefix(msg, "want ") {
		return "want " + w
	}
	return msg
}

// valueWord names the value flag f takes, for a message: "a whole number".
func valueWord(f *pflag.Flag) string {
	if w, ok := typeWords[f.Value.Type()]; ok {
		return w
	}
	if name, _ := pflag.UnquoteUsage(f); name != "" && name != "string" && name != "value" {
		return name
	}
	return "a value"
}

// The durations of every flag: Duration takes a bare number as seconds.

// DurationVarP defines a Duration flag with a one-letter shorthand.
func (fs *FlagSet) DurationVarP(p *time.Duration, name, shorthand string, value time.Duration, usage string) {
	*p = value
	fs.VarP((*Duration)(p), name, shorthand, usage)
}

// DurationVar defines a Duration flag.
func (fs *FlagSet) DurationVar(p *time.Duration, name string, value time.Duration, usage string) {
	fs.DurationVarP(p, name, "", value, usage)
}

// DurationP defines a Duration flag with a one-letter shorthand.
func (fs *FlagSet) DurationP(name, shorthand string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	fs.DurationVarP(p, name, shorthand, value, usage)
	return p
}

// Duration defines a Duration flag.
func (fs *FlagSet) Duration(name string, value time.Duration, usage string) *time.Duration {
	return fs.DurationP(name, "", value, usage)
}
