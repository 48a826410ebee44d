package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
)

// TestModesParseTheSeedsCommandLines parses the seeds' ab and wrk command
// lines, and the other flags of those tools, as people type them.
func TestModesParseTheSeedsCommandLines(t *testing.T) {
	const u = "http://127.0.0.1/"
	post := filepath.Join(t.TempDir(), "post")
	os.WriteFile(post, []byte("a=1"), 0o644)
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	ab := func(c loadgen.Config) bool { return c.Dialect == loadgen.DialectAB && c.Threads == 1 && c.URL == u }
	for _, tc := range []struct {
		args []string
		want func(c loadgen.Config, rf *runFlags, af *abFlags) bool
	}{
		// 000: the ISO image; 003: gcc 4.8 vs 9.3, with and without -k;
		// 004: the Pi.
		{[]string{"-n", "10", "-c", "10", u}, func(c loadgen.Config, rf *runFlags, af *abFlags) bool {
			return ab(c) && c.Requests == 10 && c.Connections == 10 && !c.KeepAlive && c.Duration == 0 && c.Timeout == 30*time.Second &&
				c.LengthCheck && c.Method == "GET" && !c.Timings && af.heartbeat == 0 && rf.format == "ab" && !rf.noProbe
		}},
		{[]string{"-c5000", "-n50000", u}, func(c loadgen.Config, _ *runFlags, af *abFlags) bool {
			return ab(c) && c.Connections == 5000 && c.Requests == 50000 && !c.KeepAlive && af.heartbeat == 5000
		}},
		{[]string{"-c5000", "-n50000", "-k", u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return ab(c) && c.Connections == 5000 && c.Requests == 50000 && c.KeepAlive
		}},
		{[]string{"-n", "1000", "-c", "5", u}, func(c loadgen.Config, _ *runFlags, af *abFlags) bool {
			return ab(c) && c.Requests == 1000 && c.Connections == 5 && af.heartbeat == 100
		}},
		{[]string{u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return ab(c) && c.Requests == 1 && c.Connections == 1
		}},
		// ab takes hostname[:port]/path without http://.
		{[]string{"-n", "5", "127.0.0.1/"}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return c.URL == "http://127.0.0.1/" && c.Requests == 5
		}},
		// -t implies -n 50000, unless -n is given.
		{[]string{"-t10", "-c", "5", u}, func(c loadgen.Config, _ *runFlags, af *abFlags) bool {
			return c.Duration == 10*time.Second && c.Requests == 50000 && af.heartbeat == 5000
		}},
		{[]string{"-n", "1000000", "-t", "10", u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return c.Duration == 10*time.Second && c.Requests == 1000000
		}},
		{[]string{"-s", "5", "-l", "-n200", "-q", u}, func(c loadgen.Config, _ *runFlags, af *abFlags) bool {
			return c.Timeout == 5*time.Second && !c.LengthCheck && af.heartbeat == 0 && af.quiet
		}},
		{[]string{"-HHost: x", "-C", "a=1", "-C", "b=2", "-A", "u:p", "-H", "X-A: 1", u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return slices.Equal(c.Headers, []report.Header{{Name: "Cookie", Value: "b=2"}, {Name: "Authorization", Value: "Basic dTpw"},
				{Name: "Host", Value: "x"}, {Name: "X-A", Value: "1"}})
		}},
		{[]string{"-p", post, "-T", "application/x-www-form-urlencoded", u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return c.Method == "POST" && string(c.Body) == "a=1" &&
				slices.Equal(c.Headers, []report.Header{{Name: "Content-type", Value: "application/x-www-form-urlencoded"}})
		}},
		{[]string{"-u", post, u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return c.Method == "PUT" && string(c.Body) == "a=1" && c.Headers[0].Value == "text/plain"
		}},
		{[]string{"-i", u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool { return c.Method == "HEAD" && c.Body == nil }},
		{[]string{"-m", "PATCH", "-p", post, u}, func(c loadgen.Config, _ *runFlags, _ *abFlags) bool {
			return c.Method == "PATCH" && string(c.Body) == "a=1"
		}},
		{[]string{"-kqlSdr", "-e", "p.csv", "-gplot.tsv", "-v", "2", u}, func(c loadgen.Config, _ *runFlags, af *abFlags) bool {
			return c.KeepAlive && !c.LengthCheck && c.Timings && af.quiet && af.noConfidence && af.noPercentiles &&
				af.csv == "p.csv" && af.gnuplot == "plot.tsv" && af.verbosity == 2
		}},
		{[]string{u, "--label", "server=nginx", "-label", "cc=gcc-9.3", "--repeat", "3", "--format", "json", "--no-system"},
			func(c loadgen.Config, rf *runFlags, _ *abFlags) bool {
				return rf.labels["server"] == "nginx" && rf.labels["cc"] == "gcc-9.3" && rf.repeat == 3 && rf.format == "json" && rf.noProbe
			}},
	} {
		rf, af, err := parseABFlags(tc.args, env)
		if err != nil {
			t.Errorf("ab %q: %v", tc.args, err)
			continue
		}
		if !tc.want(rf.cfg, rf, af) {
			t.Errorf("ab %q: config %+v, %+v", tc.args, rf.cfg, af)
		}
	}

	wrk := func(c loadgen.Config) bool {
		return c.Dialect == loadgen.DialectWrk && c.KeepAlive && c.WholeRequestTimeout && !c.LengthCheck && c.URL == u
	}
	for _, tc := range []struct {
		args []string
		want func(c loadgen.Config) bool
	}{
		{[]string{"-t10", "-c10", "-d30s", "--latency", u}, func(c loadgen.Config) bool {
			return wrk(c) && c.Threads == 10 && c.Connections == 10 && c.Duration == 30*time.Second && c.Timeout == 2*time.Second
		}},
		{[]string{"-t10", "-c500", "-d30s", "--latency", u}, func(c loadgen.Config) bool {
			return wrk(c) && c.Threads == 10 && c.Connections == 500 && c.Duration == 30*time.Second
		}},
		{[]string{u}, func(c loadgen.Config) bool {
			return wrk(c) && c.Threads == 2 && c.Connections == 10 && c.Duration == 10*time.Second
		}},
		{[]string{"-c1k", "-t", "4", "-d", "2m", "--timeout", "5s", "-H", "X-A: b", u}, func(c loadgen.Config) bool {
			return wrk(c) && c.Connections == 1000 && c.Threads == 4 && c.Duration == 2*time.Minute && c.Timeout == 5*time.Second && len(c.Headers) == 1
		}},
		{[]string{"--threads", "2", "--connections", "20", "--duration", "5", "--header", "A: b", "--timeout=1", u}, func(c loadgen.Config) bool {
			return wrk(c) && c.Threads == 2 && c.Connections == 20 && c.Duration == 5*time.Second && len(c.Headers) == 1 && c.Timeout == time.Second
		}},
	} {
		rf, err := parseWrkFlags(tc.args, env)
		if err != nil {
			t.Errorf("wrk %q: %v", tc.args, err)
			continue
		}
		if !tc.want(rf.cfg) {
			t.Errorf("wrk %q: config %+v", tc.args, rf.cfg)
		}
	}
}

// TestModesUsageErrors: a flag of ab or wrk that makes no sense here, or
// a combination the tool refuses, is one line saying why and exit 2.
func TestModesUsageErrors(t *testing.T) {
	const u = "http://127.0.0.1:1/"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ab", "-X", "proxy:3128", u}, "-X: proxies are not supported"},
		{[]string{"ab", "-f", "SSL2", u}, "-f SSL2: edgebench offers TLS1.2 and TLS1.3"},
		{[]string{"ab", "-Z", "AES128-SHA", u}, "-Z: edgebench offers Go's cipher suites"},
		{[]string{"ab", "--cacert", "/nonexistent/ca.pem", "https://127.0.0.1:1/"}, "--cacert: open /nonexistent/ca.pem"},
		{[]string{"wrk", "--tls-version", "1.1", "https://127.0.0.1:1/"}, `--tls-version "1.1": want 1.2 or 1.3`},
		{[]string{"ab", "-w", u}, "-w: HTML output is not supported"},
		{[]string{"ab", "-c", "10", "-n", "5", u}, "cannot use concurrency level greater than total number of requests"},
		{[]string{"ab", "-n", "0", u}, "invalid number of requests"},
		{[]string{"ab", "-i", "-p", "/etc/hostname", u}, "cannot mix HEAD, POST and PUT"},
		{[]string{"ab", "-p", "/nonexistent/post", u}, "-p: open /nonexistent/post"},
		{[]string{"ab"}, "missing URL"},
		{[]string{"ab", "--format", "wrk", u}, `--format "wrk": want ab or json`},
		{[]string{"ab", "-K", u}, "unknown flag -K; did you mean -k?"},
		{[]string{"wrk", "-s", "post.lua", u}, "-s: Lua scripts are not supported"},
		{[]string{"wrk", "-R", "1000", "-t2", "-c10", u}, "wrk2's -R: use edgebench run --rate 1000 (open loop)"},
		{[]string{"wrk", u, "-R1000"}, "wrk2's -R: use edgebench run --rate 1000 (open loop)"},
		{[]string{"wrk", "--rate", "500", u}, "wrk2's -R: use edgebench run --rate 500 (open loop)"},
		{[]string{"wrk", "-t", "4", "-c", "2", u}, "must be >= threads"},
		{[]string{"wrk", "-c", "lots", u}, "want a whole number such as 500 or 1k"},
		{[]string{"wrk", "--latancy", u}, "did you mean --latency?"},
		{[]string{"wrk", "127.0.0.1/"}, `did you mean "http://127.0.0.1/"?`},
	} {
		r := runBinary(t, tc.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "edgebench "+tc.args[0]+": ") || !strings.Contains(lines[0], tc.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 and one line with %q", tc.args, r.code, r.stderr, r.stdout, tc.want)
		}
	}
	if r := runBinary(t, "ab", "-V"); r.code != 0 || !strings.HasPrefix(r.stdout, "This is edgebench") {
		t.Errorf("ab -V: exit %d, %q", r.code, r.stdout)
	}
	if r := runBinary(t, "wrk", "-v"); r.code != 0 || !strings.HasPrefix(r.stdout, "edgebench ") {
		t.Errorf("wrk -v: exit %d, %q", r.code, r.stdout)
	}
}

// runTool runs a command with a bounded time and returns what it printed.
func runTool(t *testing.T, dir, bin string, args ...string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ran{out.String(), errb.String(), code}
}

// numberRe is a number and the unit glued to it.
var numberRe = regexp.MustCompile(`\d+(\.\d+)?([A-Za-z]*)`)

// shape is a report line without its values: each number becomes #
// followed by its decimals (12.34 is #.##), wrk's scaled units become
// their kind (us, ms, s and m a time; k and M nothing, as a count; KB, MB
// and B bytes), and runs of spaces one space.
func shape(line string) string {
	s := numberRe.ReplaceAllStringFunc(line, func(m string) string {
		sub := numberRe.FindStringSubmatch(m)
		num := "#" + regexp.MustCompile(`\d`).ReplaceAllString(sub[1], "#")
		switch unit := sub[2]; {
		case unit == "":
			return num
		case unit == "B" || len(unit) == 2 && unit[1] == 'B' && strings.ContainsRune("KMGTP", rune(unit[0])):
			return num + "<bytes>"
		case slices.Contains([]string{"us", "ms", "s", "m", "h"}, unit):
			return num + "<time>"
		case len(unit) == 1 && strings.ContainsRune("kMGTP", rune(unit[0])):
			return num
		default:
			return num + unit
		}
	})
	return strings.Join(strings.Fields(s), " ")
}

// fixedWidth are the lines whose figures are right-aligned in columns of
// a fixed width: their length is the layout's.
var fixedWidth = regexp.MustCompile(`^(Connect|Processing|Waiting|Total):|^ +\d+%|^    (Latency|Req/Sec) |^(Requests|Transfer)/sec:|^  Thread Stats|^ +min `)

// labelled are "Label:   value" lines: the column where the value starts
// is the layout's.
var labelled = regexp.MustCompile(`^[A-Z][A-Za-z /-]*: +`)

// sameLayout reports how got differs from want line by line: the same
// lines in the same order, with the same labels, units, decimals and
// widths; the values may differ.
func sameLayout(got, want []string) string {
	var diffs []string
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		switch {
		case shape(g) != shape(w):
			diffs = append(diffs, fmt.Sprintf("line %d: %q, want the shape of %q", i+1, g, w))
		case fixedWidth.MatchString(w) && len(g) != len(w):
			diffs = append(diffs, fmt.Sprintf("line %d: %q is %d wide, want %d as %q", i+1, g, len(g), len(w), w))
		case !fixedWidth.MatchString(w) && labelled.MatchString(w) && len(labelled.FindString(g)) != len(labelled.FindString(w)):
			diffs = append(diffs, fmt.Sprintf("line %d: %q, want the value where %q has it", i+1, g, w))
		}
	}
	return strings.Join(diffs, "\n")
}

// abReport is ab's stdout without its banner (4 lines), edgebench's
// System section, and the median warnings, which depend on the values.
func abReport(t *testing.T, stdout string) []string {
	t.Helper()
	lines := strings.Split(stdout, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[0], "This is ") || lines[3] != "" {
		t.Fatalf("no banner of 3 lines and a blank one:\n%s", stdout)
	}
	return toolReport(lines[4:])
}

// toolReport is a tool's report without edgebench's System section and
// the median warnings of ab.
func toolReport(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "System ("):
			return out[:len(out)-1] // and the blank line before it
		case strings.HasPrefix(l, "WARNING: The median") || strings.HasPrefix(l, "ERROR: The median"):
			i++ // and its second line
		default:
			out = append(out, l)
		}
	}
	return out
}

// fieldsOnce reports the labels of a tool's report ("Failed requests:",
// "Requests/sec:") that the whole output, System section included, has on
// more lines than the report itself.
func fieldsOnce(report []string, output string) []string {
	count := func(lines []string, label string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, label) {
				n++
			}
		}
		return n
	}
	var bad []string
	all := strings.Split(output, "\n")
	for _, l := range report {
		if i := strings.IndexByte(l, ':'); i > 0 {
			if label := strings.TrimSpace(l[:i+1]); count(all, label) != count(report, label) {
				bad = append(bad, label)
			}
		}
	}
	return bad
}

// oneLiner runs a shell one-liner on a report and returns its output.
func oneLiner(t *testing.T, script, report string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdin = strings.NewReader(report)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return string(out)
}

// TestModesMatchTheRealTools runs real ab and wrk and edgebench ab and wrk
// with the same flags against one nginx: the reports have the same lines
// in the same order, with the same labels, units, decimals and widths,
// ab's progress lines are the same, and the one-liners people run on
// these reports find each field once in edgebench's, System section
// included.
func TestModesMatchTheRealTools(t *testing.T) {
	abBin, wrkBin := testenv.Tool(t, "ab"), testenv.Tool(t, "wrk")
	srv := testenv.NginxLogging(t, 1, `$connection $connection_requests "$request"`)
	base := "http://" + srv.Addr
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "post"), []byte("a=1&b=2"), 0o644)

	for _, tc := range []struct {
		args     []string
		progress bool // the same progress lines (a -n run)
		failed   string
	}{
		{[]string{"-n", "1000", "-c", "5", base + "/index.html"}, true, "0"},
		{[]string{"-c50", "-n5000", base + "/index.html"}, true, "0"},
		{[]string{"-c50", "-n5000", "-k", base + "/index.html"}, true, "0"},
		{[]string{"-n", "200", "-c", "4", "-q", "-S", base + "/missing"}, true, "0"},
		{[]string{"-n", "100", "-c", "2", "-d", "-l", "-p", "post", "-T", "text/plain", base + "/index.html"}, true, "0"},
		{[]string{"-t", "1", "-c", "2", base + "/index.html"}, false, "0"},
		{[]string{"-n", "1", base + "/index.html"}, true, "0"},
	} {
		real := runTool(t, dir, abBin, tc.args...)
		ours := runTool(t, dir, testenv.Binary(t, "."), append([]string{"ab"}, tc.args...)...)
		if real.code != 0 || ours.code != 0 {
			t.Fatalf("ab %q: exit %d (%s), edgebench ab exit %d (%s)", tc.args, real.code, real.stderr, ours.code, ours.stderr)
		}
		if d := sameLayout(abReport(t, ours.stdout), abReport(t, real.stdout)); d != "" {
			t.Errorf("ab %q: the reports differ:\n%s\n--- edgebench ab\n%s\n--- ab\n%s", tc.args, d, ours.stdout, real.stdout)
		}
		if tc.progress && ours.stderr != real.stderr {
			t.Errorf("ab %q: progress\n%s\nwant\n%s", tc.args, ours.stderr, real.stderr)
		}
		if !tc.progress && !regexp.MustCompile(`^(Completed [1-9]\d*000 requests\n)*Finished \d+ requests\n(edgebench ab: stopped at 50000 .*\n)?$`).MatchString(ours.stderr) {
			t.Errorf("ab %q: progress\n%s", tc.args, ours.stderr)
		}
		for _, ol := range []struct{ script, want string }{
			{`awk '/Requests per second/ {print $4}'`, ""},
			{`awk '/Failed requests/ {print $3}'`, tc.failed + "\n"},
		} {
			got, want := oneLiner(t, ol.script, ours.stdout), oneLiner(t, ol.script, real.stdout)
			if ol.want != "" && (got != ol.want || want != ol.want) || strings.Count(got, "\n") != strings.Count(want, "\n") || shape(got) != shape(want) {
				t.Errorf("ab %q | %s: %q, ab's %q", tc.args, ol.script, got, want)
			}
		}
		if !strings.Contains(ours.stdout, "\nSystem (") {
			t.Errorf("ab %q: no System section:\n%s", tc.args, ours.stdout)
		}
		if bad := fieldsOnce(abReport(t, ours.stdout), ours.stdout); len(bad) > 0 {
			t.Errorf("ab %q: the System section repeats %q:\n%s", tc.args, bad, ours.stdout)
		}
	}

	// -e and -g: ab's files, line for line.
	real := runTool(t, dir, abBin, "-n", "300", "-c", "3", "-e", "ab.csv", "-g", "ab.tsv", base+"/index.html")
	ours := runTool(t, dir, testenv.Binary(t, "."), "ab", "-n", "300", "-c", "3", "-e", "eb.csv", "-g", "eb.tsv", "--no-system", base+"/index.html")
	if real.code != 0 || ours.code != 0 {
		t.Fatalf("-e -g: exit %d and %d: %s", real.code, ours.code, ours.stderr)
	}
	dateRe := regexp.MustCompile(`^[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \d{4}\t`)
	for _, f := range [][2]string{{"eb.csv", "ab.csv"}, {"eb.tsv", "ab.tsv"}} {
		g, _ := os.ReadFile(filepath.Join(dir, f[0]))
		w, _ := os.ReadFile(filepath.Join(dir, f[1]))
		gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
		if len(gl) != len(wl) || len(gl) < 100 || gl[0] != wl[0] {
			t.Errorf("%s: %d lines, ab's %d; headers %q and %q", f[0], len(gl), len(wl), gl[0], wl[0])
			continue
		}
		for i := range gl {
			if shape(gl[i]) != shape(wl[i]) || dateRe.MatchString(gl[i]) != dateRe.MatchString(wl[i]) {
				t.Errorf("%s line %d: %q, ab's %q", f[0], i+1, gl[i], wl[i])
				break
			}
		}
	}

	// wrk's timeouts: replies that take longer than 2 s, counted when
	// they come, their latency left out: where wrk prints 0.00us, a
	// latency no request backs, edgebench wrk prints '-' and says why.
	slow := startTarget(t) + "/delay/2500"
	for _, tc := range []struct {
		args      []string
		latency   bool
		noLatency bool
	}{
		{[]string{"-t2", "-c10", "-d1s", "--latency", base + "/index.html"}, true, false},
		{[]string{"-t1", "-c5", "-d1", base + "/missing"}, false, false},
		{[]string{"-t1", "-c2", "-d3", "--latency", slow}, true, true},
	} {
		real := runTool(t, dir, wrkBin, tc.args...)
		ours := runTool(t, dir, testenv.Binary(t, "."), append([]string{"wrk"}, tc.args...)...)
		if real.code != 0 || ours.code != 0 {
			t.Fatalf("wrk %q: exit %d (%s), edgebench wrk exit %d (%s)", tc.args, real.code, real.stderr, ours.code, ours.stderr)
		}
		if tc.noLatency {
			real.stdout = wrkWithoutLatency(real.stdout, "every response took the timeout or longer, which leaves it out of the latency")
		}
		if d := sameLayout(toolReport(strings.Split(ours.stdout, "\n")), strings.Split(real.stdout, "\n")); d != "" {
			t.Errorf("wrk %q: the reports differ:\n%s\n--- edgebench wrk\n%s\n--- wrk\n%s", tc.args, d, ours.stdout, real.stdout)
		}
		got, want := oneLiner(t, `awk '/Requests\/sec/ {print $2}'`, ours.stdout), oneLiner(t, `awk '/Requests\/sec/ {print $2}'`, real.stdout)
		if strings.Count(got, "\n") != 1 || shape(got) != shape(want) {
			t.Errorf("wrk %q | awk Requests/sec: %q, wrk's %q", tc.args, got, want)
		}
		got, want = oneLiner(t, `grep -A4 'Latency Distribution' || true`, ours.stdout), oneLiner(t, `grep -A4 'Latency Distribution' || true`, real.stdout)
		if d := sameLayout(strings.Split(got, "\n"), strings.Split(want, "\n")); d != "" || (want != "") != tc.latency {
			t.Errorf("wrk %q | grep -A4 'Latency Distribution':\n%s\nwrk's\n%s\n%s", tc.args, got, want, d)
		}
		if bad := fieldsOnce(toolReport(strings.Split(ours.stdout, "\n")), ours.stdout); len(bad) > 0 || !strings.Contains(ours.stdout, "\nSystem (") {
			t.Errorf("wrk %q: the System section repeats %q:\n%s", tc.args, bad, ours.stdout)
		}
		if ours.stderr != "" || real.stderr != "" {
			t.Errorf("wrk %q: stderr %q, wrk's %q", tc.args, ours.stderr, real.stderr)
		}
	}
}

// wrkWithoutLatency is wrk's report of a window without a latency as
// edgebench wrk prints it: '-' where wrk prints 0.00us, and why after the
// requests line.
func wrkWithoutLatency(report, why string) string {
	var out []string
	for _, l := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(l, "    Latency "):
			l = "    Latency        -         -        -         -"
		case regexp.MustCompile(`^ +\d+% +0\.00us$`).MatchString(l):
			l = l[:8] + "       -"
		}
		out = append(out, l)
		if strings.Contains(l, " requests in ") {
			out = append(out, "  No latency: "+why)
		}
	}
	return strings.Join(out, "\n")
}

// TestABConnectionsInNginxLog: nginx's access log shows one request per
// connection for edgebench ab without -k, and the connections reused with
// -k, each request in HTTP/1.0 as ab sends it; "Keep-Alive requests"
// counts them.
func TestABConnectionsInNginxLog(t *testing.T) {
	srv := testenv.NginxLogging(t, 1, `$connection $connection_requests "$request"`)
	url := "http://" + srv.Addr + "/index.html"
	seen := 0
	for _, keep := range []bool{false, true} {
		args := []string{"ab", "-n", "200", "-c", "4", "--no-system", url}
		if keep {
			args = append(args, "-k")
		}
		r := runBinary(t, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
		var lines []string
		for range 100 {
			b, _ := os.ReadFile(srv.AccessLog)
			if lines = strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines)-seen >= 200 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		lines, seen = lines[seen:], len(lines)
		conns, reused := map[string]int{}, 0
		for _, l := range lines {
			var conn, n int
			var req string
			if _, err := fmt.Sscanf(l, "%d %d %q", &conn, &n, &req); err != nil || req != "GET /index.html HTTP/1.0" {
				t.Fatalf("log line %q: %v", l, err)
			}
			conns[fmt.Sprint(conn)]++
			if n > 1 {
				reused++
			}
		}
		ka := regexp.MustCompile(`(?m)^Keep-Alive requests: +(\d+)$`).FindStringSubmatch(r.stdout)
		switch {
		case len(lines) != 200:
			t.Errorf("-k %v: nginx logged %d requests, want 200", keep, len(lines))
		case !keep && (len(conns) != 200 || reused != 0 || ka != nil):
			t.Errorf("without -k: %d connections for 200 requests, %d reused; Keep-Alive line %q", len(conns), reused, ka)
		case keep && (len(conns) > 4 || reused < 196 || ka == nil || ka[1] != "200"):
			t.Errorf("-k: %d connections, %d requests on a reused one, Keep-Alive line %q", len(conns), reused, ka)
		}
	}
}

// TestModesJSONAndRepeat: --format json is run's JSON, with the mode's
// labels and repetitions; --repeat prints each run's report then the
// spread.
func TestModesJSONAndRepeat(t *testing.T) {
	base := startTarget(t)
	r := runBinary(t, "ab", "-n", "100", "-c", "2", "-k", "--format", "json", "--label", "server=builtin", base+"/bytes/100")
	var doc struct {
		Completed int64             `json:"completed"`
		KeepAlive bool              `json:"keepalive"`
		Labels    map[string]string `json:"labels"`
		System    json.RawMessage   `json:"system"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || r.stderr != "" {
		t.Fatalf("ab --format json: exit %d, %v, stderr %q\n%s", r.code, err, r.stderr, r.stdout)
	}
	if doc.Completed != 100 || !doc.KeepAlive || doc.Labels["server"] != "builtin" || len(doc.System) == 0 {
		t.Errorf("ab --format json: %+v", doc)
	}
	r = runBinary(t, "wrk", "-t1", "-c2", "-d1", "--repeat", "2", "--no-system", base+"/bytes/100")
	if r.code != 0 || strings.Count(r.stdout, "Running 1s test @") != 2 || strings.Count(r.stdout, "Requests/sec:") != 2 ||
		!strings.Contains(r.stdout, "over 2 runs") || strings.Contains(r.stdout, "System (") {
		t.Errorf("wrk --repeat 2: exit %d %s\n%s", r.code, r.stderr, r.stdout)
	}
}

// TestABTimeLimitImpliesN: -t alone stops at 50000 requests, as ab's does
// (the seeds' trap); edgebench ab says so on stderr, ab does not.
func TestABTimeLimitImpliesN(t *testing.T) {
	srv := testenv.Nginx(t, 1)
	r := runBinary(t, "ab", "-k", "-t", "30", "-c", "8", "--no-system", "http://"+srv.Addr+"/index.html")
	secs := regexp.MustCompile(`(?m)^Time taken for tests: +([\d.]+) seconds$`).FindStringSubmatch(r.stdout)
	if secs == nil {
		t.Fatalf("exit %d, no time taken\n%s\n%s", r.code, r.stderr, r.stdout)
	}
	if taken, _ := strconv.ParseFloat(secs[1], 64); r.code != 0 || !strings.Contains(r.stdout, "\nComplete requests:      50000\n") || taken >= 30 ||
		!strings.Contains(r.stderr, "Finished 50000 requests\nedgebench ab: stopped at 50000 requests after "+secs[1]+" s of -t 30s") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stderr, r.stdout)
	}
}

// captureRequests listens on loopback and answers every request with a
// small response that closes the connection; first returns the first
// request (head and Content-length body) of a connection accepted since
// the last call.
func captureRequests(t *testing.T) (url string, first func() string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 1)
	var mu sync.Mutex
	gen := 0 // bumped by each call of first
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted := gen
			mu.Unlock()
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				var req strings.Builder
				length := 0
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					req.WriteString(line)
					if n, ok := strings.CutPrefix(strings.ToLower(line), "content-length: "); ok {
						length, _ = strconv.Atoi(strings.TrimSpace(n))
					}
					if line == "\r\n" {
						break
					}
				}
				body := make([]byte, length)
				io.ReadFull(br, body)
				req.Write(body)
				mu.Lock()
				if gen == accepted {
					select {
					case got <- req.String():
					default:
					}
				}
				mu.Unlock()
				io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/path?q=1", func() string {
		select {
		case r := <-got:
			mu.Lock()
			gen++
			select {
			case <-got: // a later request of the same run
			default:
			}
			mu.Unlock()
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no request came")
			return ""
		}
	}
}

// TestModesSendTheToolsRequest captures what real ab and wrk send, and
// edgebench ab and wrk with the same flags: the same request line and
// headers in the same order, the same body; only the User-Agent says who
// sent it.
func TestModesSendTheToolsRequest(t *testing.T) {
	abBin, wrkBin := testenv.Tool(t, "ab"), testenv.Tool(t, "wrk")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "post"), []byte("a=1&b=2"), 0o644)
	ua := regexp.MustCompile(`(?m)^User-Agent: .*\r$`)
	for _, args := range [][]string{
		{"-n", "1"},
		{"-n", "1", "-k", "-C", "s=1", "-A", "u:p", "-H", "X-A: b", "-p", "post", "-T", "text/x-test"},
		{"-n", "1", "-i", "-H", "Host: example.org", "-H", "Accept: text/html"},
	} {
		url, first := captureRequests(t)
		runTool(t, dir, abBin, append(args, url)...)
		want := first()
		runTool(t, dir, testenv.Binary(t, "."), append(append([]string{"ab", "--no-system"}, args...), url)...)
		got := first()
		if !strings.Contains(got, "\r\nUser-Agent: edgebench/") && !strings.Contains(args[len(args)-1], "User-Agent") {
			t.Errorf("ab %q: no edgebench User-Agent in\n%s", args, got)
		}
		if g, w := ua.ReplaceAllString(got, "User-Agent: *\r"), ua.ReplaceAllString(want, "User-Agent: *\r"); g != w {
			t.Errorf("ab %q: edgebench ab sent\n%q\nab sent\n%q", args, g, w)
		}
	}
	// wrk's headers come out of a Lua table, in no set order.
	url, first := captureRequests(t)
	runTool(t, dir, wrkBin, "-t1", "-c1", "-d1", "-H", "X-A: b", url)
	want := strings.Split(first(), "\r\n")
	runTool(t, dir, testenv.Binary(t, "."), "wrk", "-t1", "-c1", "-d1", "--no-system", "-H", "X-A: b", url)
	got := strings.Split(first(), "\r\n")
	if got[0] != want[0] || len(got) != len(want) {
		t.Fatalf("edgebench wrk sent %q, wrk %q", got, want)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("edgebench wrk sent the headers %q, wrk %q", got, want)
	}
}

// TestModesRefusedTarget: a port nobody listens on is one line saying so
// and exit status 1, after the lines the tool prints before its run.
func TestModesRefusedTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, tc := range []struct{ cmd, last string }{
		// -n 1: no progress lines, as ab; the line ends before the error
		// (TestABErrorOnItsOwnLine), where ab's does not.
		{"ab", "Benchmarking 127.0.0.1 (be patient)...\n"},
		{"wrk", "  2 threads and 10 connections\n"},
	} {
		r := runBinary(t, tc.cmd, "http://"+addr+"/")
		want := "edgebench " + tc.cmd + ": connection refused: " + addr + "\n"
		if r.code != 1 || r.stderr != want || !strings.HasSuffix(r.stdout, tc.last) {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want 1, %q after %q", tc.cmd, r.code, r.stderr, r.stdout, want, tc.last)
		}
	}
}
