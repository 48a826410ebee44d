package cli

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadFlags is a flag set shaped like `edgebench run`'s and, where they
// overlap, ab's and wrk's: one-letter flags with values, one-letter
// booleans, repeatable -H, wrk's long names.
type loadFlags struct {
	fs               *FlagSet
	c, t             int
	n                int64
	d, timeout       time.Duration
	keepAlive, quiet bool
	latency          bool
	headers          []string
	format           string
	labels           Pairs
	rate             float64
}

func newLoadFlags(stderr io.Writer) *loadFlags {
	lf := &loadFlags{fs: NewFlagSet("run", "edgebench run [flags] URL", stderr), labels: Pairs{}}
	fs := lf.fs
	fs.IntVarP(&lf.c, "connections", "c", 10, "connections")
	fs.Int64VarP(&lf.n, "requests", "n", 0, "requests")
	fs.DurationVarP(&lf.d, "duration", "d", 0, "duration")
	fs.IntVarP(&lf.t, "threads", "t", 0, "threads")
	fs.BoolVarP(&lf.keepAlive, "keepalive", "k", true, "keep-alive")
	fs.BoolFunc("no-keepalive", "no keep-alive", func(s string) error {
		off, err := strconv.ParseBool(s)
		lf.keepAlive = !off
		return err
	})
	fs.FuncP("header", "H", "request header `'Name: value'` (repeatable)", func(s string) error {
		if !strings.Contains(s, ":") {
			return errors.New("want 'Name: value'")
		}
		lf.headers = append(lf.headers, s)
		return nil
	})
	fs.DurationVar(&lf.timeout, "timeout", 2*time.Second, "timeout")
	fs.BoolVar(&lf.latency, "latency", false, "latency")
	fs.BoolVarP(&lf.quiet, "quiet", "q", false, "quiet")
	fs.StringVar(&lf.format, "format", "edgebench", "report")
	fs.Var(lf.labels, "label", "label k=v (repeatable)")
	fs.Float64Var(&lf.rate, "rate", 0, "rate")
	fs.Refuse("proxy", "X", true, "no proxy: the load goes to the server itself")
	fs.Refuse("script", "s", true, "no Lua scripts: -H, -m and --body make the request")
	fs.Refuse("no-probe", "", false, "the machine is always sampled")
	return lf
}

const url = "http://127.0.0.1/"

func TestFlagsAsTyped(t *testing.T) {
	for _, tc := range []struct {
		line  string // split on spaces; "_" stands for a space inside a word
		check func(lf *loadFlags) bool
		rest  []string
	}{
		// The seeds' command lines, as typed for wrk and ab.
		{"-t10 -c10 -d30s --format wrk " + url, func(lf *loadFlags) bool {
			return lf.t == 10 && lf.c == 10 && lf.d == 30*time.Second && lf.format == "wrk"
		}, []string{url}},
		{"-t10 -c500 -d30s --latency " + url, func(lf *loadFlags) bool {
			return lf.t == 10 && lf.c == 500 && lf.d == 30*time.Second && lf.latency
		}, []string{url}},
		{"-c5000 -n50000 " + url, func(lf *loadFlags) bool { return lf.c == 5000 && lf.n == 50000 && lf.keepAlive }, []string{url}},
		{"-c5000 -n50000 -k " + url, func(lf *loadFlags) bool { return lf.c == 5000 && lf.n == 50000 && lf.keepAlive }, []string{url}},
		{"-n 1000 -c 5 " + url, func(lf *loadFlags) bool { return lf.n == 1000 && lf.c == 5 }, []string{url}},
		{"-c5000 -d 30 " + url, func(lf *loadFlags) bool { return lf.c == 5000 && lf.d == 30*time.Second }, []string{url}},
		// Attached, apart, after =.
		{"-HHost:_x " + url, func(lf *loadFlags) bool { return slices.Equal(lf.headers, []string{"Host: x"}) }, []string{url}},
		{"-H Host:_x -H=Accept:_* --header X-A:_1 --header=X-B:_2 " + url, func(lf *loadFlags) bool {
			return slices.Equal(lf.headers, []string{"Host: x", "Accept: *", "X-A: 1", "X-B: 2"})
		}, []string{url}},
		{"-c=500 " + url, func(lf *loadFlags) bool { return lf.c == 500 }, []string{url}},
		{"--connections 500 --threads=2 --duration 1m " + url, func(lf *loadFlags) bool {
			return lf.c == 500 && lf.t == 2 && lf.d == time.Minute
		}, []string{url}},
		// Long flags with one dash or two.
		{"--timeout=2s " + url, func(lf *loadFlags) bool { return lf.timeout == 2*time.Second }, []string{url}},
		{"-timeout 3s " + url, func(lf *loadFlags) bool { return lf.timeout == 3*time.Second }, []string{url}},
		{"-timeout=4 " + url, func(lf *loadFlags) bool { return lf.timeout == 4*time.Second }, []string{url}},
		{"--timeout 0.5 " + url, func(lf *loadFlags) bool { return lf.timeout == 500*time.Millisecond }, []string{url}},
		{"-connections 7 " + url, func(lf *loadFlags) bool { return lf.c == 7 }, []string{url}},
		// Booleans: alone, grouped, =false.
		{"-k=false " + url, func(lf *loadFlags) bool { return !lf.keepAlive }, []string{url}},
		{"--keepalive=false " + url, func(lf *loadFlags) bool { return !lf.keepAlive }, []string{url}},
		{"-keepalive=false " + url, func(lf *loadFlags) bool { return !lf.keepAlive }, []string{url}},
		{"--no-keepalive " + url, func(lf *loadFlags) bool { return !lf.keepAlive }, []string{url}},
		{"-no-keepalive -k " + url, func(lf *loadFlags) bool { return lf.keepAlive }, []string{url}},
		{"-kq " + url, func(lf *loadFlags) bool { return lf.keepAlive && lf.quiet }, []string{url}},
		{"-qc5 " + url, func(lf *loadFlags) bool { return lf.quiet && lf.c == 5 }, []string{url}},
		// The URL before, between or after the flags; -- ends them.
		{url + " -c 3 -n 9", func(lf *loadFlags) bool { return lf.c == 3 && lf.n == 9 }, []string{url}},
		{"-c 3 " + url + " -n 9", func(lf *loadFlags) bool { return lf.c == 3 && lf.n == 9 }, []string{url}},
		{"-c 3 -- -n", func(lf *loadFlags) bool { return lf.c == 3 && lf.n == 0 }, []string{"-n"}},
		{"- -c 3", func(lf *loadFlags) bool { return lf.c == 3 }, []string{"-"}},
		// A value is taken whatever it looks like: -c -4 is for the
		// command to refuse, -H -timeout is a header.
		{"-c -4 " + url, func(lf *loadFlags) bool { return lf.c == -4 }, []string{url}},
		{"--label a=1 --label=b=2 " + url, func(lf *loadFlags) bool { return lf.labels.String() == "a=1,b=2" }, []string{url}},
	} {
		args := strings.Fields(tc.line)
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "_", " ")
		}
		lf := newLoadFlags(io.Discard)
		rest, err := lf.fs.Parse(args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if !tc.check(lf) || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: parsed %+v, rest %q", args, *lf, rest)
		}
	}
}

func TestFlagMistakesAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keep-alive", url}, "unknown flag --keep-alive; did you mean --keepalive?"},
		{[]string{"-keep-alive", url}, "unknown flag -keep-alive; did you mean --keepalive?"},
		{[]string{"--conections=5", url}, "unknown flag --conections; did you mean --connections?"},
		{[]string{"--thread", "2", url}, "unknown flag --thread; did you mean --threads?"},
		{[]string{"--lat", url}, "unknown flag --lat; did you mean --latency?"},
		{[]string{"-K", url}, "unknown flag -K; did you mean -k?"},
		{[]string{"-x", "proxy:3128", url}, "unknown flag -x"},
		{[]string{"-X", "proxy:3128", url}, "-X: no proxy: the load goes to the server itself"},
		{[]string{"-Xproxy:3128", url}, "-X: no proxy: the load goes to the server itself"},
		{[]string{"--script=x.lua", url}, "--script: no Lua scripts: -H, -m and --body make the request"},
		{[]string{url, "-s", "x.lua"}, "-s: no Lua scripts: -H, -m and --body make the request"},
		{[]string{"-no-probe", url}, "-no-probe: the machine is always sampled"},
		{[]string{"--zzzzzz", url}, "unknown flag --zzzzzz"},
		{[]string{"-c", "lots", url}, `-c "lots": want a whole number`},
		{[]string{"-clots", url}, `-c "lots": want a whole number`},
		{[]string{"--connections=lots", url}, `--connections "lots": want a whole number`},
		{[]string{"-connections", "lots", url}, `-connections "lots": want a whole number`},
		{[]string{"-c", "5", "--connections", "x", url}, `--connections "x": want a whole number`},
		{[]string{"-d", "soon", url}, `-d "soon": want a duration such as 30s, 500ms or 2m (a bare number is seconds)`},
		{[]string{"-timeout", "-2s", url}, `-timeout "-2s": want a duration of 0 or more`},
		{[]string{"-k=maybe", url}, `-k "maybe": want true or false`},
		{[]string{"--no-keepalive=maybe", url}, `--no-keepalive "maybe": want true or false`},
		{[]string{"-H", "NoColon", url}, `-H "NoColon": want 'Name: value'`},
		{[]string{"--label", "nokv", url}, `--label "nokv": want k=v`},
		{[]string{url, "-c"}, "-c needs a value: a whole number"},
		{[]string{url, "--format"}, "--format needs a value"},
		{[]string{url, "-H"}, "-H needs a value: 'Name: value'"},
		{[]string{"--rate", "NaN", url}, `--rate "NaN": want a finite number`},
		{[]string{"--rate=-Inf", url}, `--rate "-Inf": want a finite number`},
		{[]string{"-rate", "1e400", url}, `-rate "1e400": want a number`},
		{[]string{"--rate", "infinity", url}, `--rate "infinity": want a finite number`},
	} {
		var stderr bytes.Buffer
		_, err := newLoadFlags(&stderr).fs.Parse(tc.args)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Msg != tc.want || stderr.Len() != 0 {
			t.Errorf("%q: error %v (stderr %q), want usage error %q", tc.args, err, stderr.String(), tc.want)
		}
	}
}

func TestHelpPrintsUsage(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {url, "-c", "5", "--help"}} {
		var stderr, usage bytes.Buffer
		_, err := newLoadFlags(&stderr).fs.Parse(args)
		var he *HelpError
		if errors.As(err, &he) {
			he.FlagSet.PrintUsage(&usage)
		}
		out := usage.String()
		if !errors.Is(err, ErrHelp) || stderr.Len() > 0 || !strings.HasPrefix(out, "usage: edgebench run [flags] URL\n") ||
			!strings.Contains(out, "-c, --connections int") || !strings.Contains(out, "-H, --header 'Name: value'") ||
			!strings.Contains(out, "--timeout duration") || !strings.Contains(out, "(default 2s)") || strings.Contains(out, "proxy") {
			t.Errorf("%q: %v\n%s", args, err, out)
		}
	}
}

func TestParseNoArgs(t *testing.T) {
	fs := NewFlagSet("info", "edgebench info", io.Discard)
	fs.String("format", "text", "text or json")
	if err := fs.ParseNoArgs([]string{"-format", "json"}); err != nil {
		t.Fatal(err)
	}
	var ue *UsageError
	if err := fs.ParseNoArgs([]string{"extra"}); !errors.As(err, &ue) || ue.Msg != `unexpected argument "extra"` {
		t.Errorf("extra argument: %v", err)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30": 30 * time.Second, "30s": 30 * time.Second, "2m": 2 * time.Minute, "0.5": 500 * time.Millisecond,
		"500ms": 500 * time.Millisecond, "1h30m": 90 * time.Minute, "0": 0, " 10 ": 10 * time.Second,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "-1", "-5s", "30x", "1e300", "NaN", "Inf"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("%q: %v, want an error", in, d)
		}
	}
	for d, want := range map[time.Duration]string{0: "0", 10 * time.Minute: "10m", time.Hour: "1h", 90 * time.Second: "1m30s", 2 * time.Second: "2s"} {
		if got := (*Duration)(&d).String(); got != want {
			t.Errorf("%v: String %q, want %q", d, got, want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"--keepalive", "-k", "--no-keepalive", "--connections", "-c", "--timeout", "--threads", "-t", "--db", "--device"}
	for typed, want := range map[string]string{
		"--keep-alive": "--keepalive", "--KeepAlive": "--keepalive", "-K": "-k", "-C": "-c", "--timout": "--timeout",
		"--no-keep-alive": "--no-keepalive", "--conn": "--connections", "--thread": "--threads",
		"-x": "", "--verbose": "", "--de": "--db", "--dev": "--device", "--tiemout": "--timeout", "--theards": "--threads",
	} {
		if got := closest(typed, names); got != want {
			t.Errorf("closest(%q) = %q, want %q", typed, got, want)
		}
	}
}
