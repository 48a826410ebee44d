package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
)

// abFlags are ab's flags that shape what is printed rather than what is
// sent.
type abFlags struct {
	quiet         bool // -q: no progress lines
	verbosity     int  // -v: 2 and more print the request
	csv, gnuplot  string
	noConfidence  bool
	noPercentiles bool
	variable      bool  // -l
	heartbeat     int64 // "Completed N requests" every heartbeat responses; 0: none
	impliedN      bool  // -t without -n: ab's -n 50000
}

// abBanner is edgebench's in the place of ab's: three lines and a blank
// one, as ab's, saying what runs.
func abBanner(w io.Writer) {
	fmt.Fprintf(w, "This is edgebench, Version %s, in ApacheBench 2.3 mode: ab's flags, semantics and report\n", version)
	fmt.Fprintln(w, "Not ApacheBench itself: edgebench's own load generator, one event loop as ab")
	fmt.Fprintln(w, "The machine's figures during the run follow ab's report (--no-system leaves them out)")
	fmt.Fprintln(w)
}

// parseABFlags parses ab's command line (ab 2.3's flags, as typed for ab:
// -c5000 -n50000 -k), with edgebench's long flags for what ab lacks.
func parseABFlags(args []string, env *cli.Env) (*runFlags, *abFlags, error) {
	rf := &runFlags{labels: map[string]string{}, format: "ab", repeat: 1, probeInterval: time.Second, probeRoot: "/"}
	af := &abFlags{}
	c := &rf.cfg
	fs := cli.NewFlagSet("ab", "edgebench ab [ab's flags] [http://]hostname[:port]/path", env.Stderr)
	fs.Int64VarP(&c.Requests, "requests", "n", 1, "number of requests to perform")
	fs.IntVarP(&c.Connections, "concurrency", "c", 1, "number of multiple requests to make at a time")
	fs.DurationVarP(&c.Duration, "timelimit", "t", 0, "time to spend benchmarking at most; implies -n 50000 unless -n is given")
	fs.DurationVarP(&c.Timeout, "timeout", "s", 30*time.Second, "idle timeout: a request fails when the server sends nothing for this long")
	fs.DurationVar(&c.MaxTime, "max-time", loadgen.DefaultMaxTime, "without -t: the run ends after this long, its requests in flight cut, so a server that never ends a response cannot hold it (0: no bound; ab has none)")
	fs.BoolVarP(&c.KeepAlive, "keepalive", "k", false, "use HTTP keep-alive")
	var headers, cookie, auth []report.Header
	headerFlag(fs, &headers, "add a header line `'Name: value'` (repeatable)")
	fs.FuncP("cookie", "C", "add a cookie, e.g. `'Apache=1234'` (the last one given is sent, as in ab)", func(s string) error {
		cookie = []report.Header{{Name: "Cookie", Value: s}}
		return nil
	})
	basic := func(name string) func(string) error {
		return func(s string) error {
			auth = append(auth, report.Header{Name: name, Value: "Basic " + base64.StdEncoding.EncodeToString([]byte(strings.TrimSpace(s)))})
			return nil
		}
	}
	fs.FuncP("auth", "A", "basic WWW authentication, `user:password`", basic("Authorization"))
	fs.FuncP("proxy-auth", "P", "basic proxy authentication, `user:password` (sent as a header)", basic("Proxy-Authorization"))
	method := fs.StringP("method", "m", "", "method name")
	head := fs.BoolP("head", "i", false, "use HEAD instead of GET")
	postfile := fs.StringP("postfile", "p", "", "`file` with the data to POST (remember -T)")
	putfile := fs.StringP("putfile", "u", "", "`file` with the data to PUT (remember -T)")
	ctype := fs.StringP("content-type", "T", "text/plain", "Content-type of the POST or PUT data")
	fs.BoolVarP(&af.variable, "variable-length", "l", false, "accept variable document length (dynamic pages): no Length failures")
	fs.BoolP("receive-errors-ok", "r", false, "accepted: edgebench never stops at a receive error, it counts it")
	fs.BoolVarP(&af.quiet, "quiet", "q", false, "no progress lines (\"Completed N requests\")")
	fs.IntVarP(&af.verbosity, "verbosity", "v", 0, "2 and more print the request sent (responses are not logged)")
	fs.StringVarP(&af.csv, "csv", "e", "", "write the CSV `file` of the percentages served")
	fs.StringVarP(&af.gnuplot, "gnuplot", "g", "", "write every request's times to the gnuplot `file`")
	fs.BoolVarP(&af.noConfidence, "no-confidence", "S", false, "no confidence estimators (stdev, median) or warnings")
	fs.BoolVarP(&af.noPercentiles, "no-percentiles", "d", false, "no table of percentiles")
	showVersion := fs.BoolP("version", "V", false, "print the version and exit")
	for _, f := range []struct {
		name, short string
		value       bool
		why         string
	}{
		{"proxy", "X", true, "proxies are not supported: edgebench measures the server it connects to (give the proxy's URL, and -H 'Host: ...')"},
		{"bind", "B", true, "binding to a local address is not supported"},
		{"window-size", "b", true, "TCP buffer sizes are left to the kernel"},
		{"html", "w", false, "HTML output is not supported: --format json gives a machine-readable report"},
		{"table-attrs", "x", true, "HTML output is not supported: --format json gives a machine-readable report"},
		{"tr-attrs", "y", true, "HTML output is not supported: --format json gives a machine-readable report"},
		{"td-attrs", "z", true, "HTML output is not supported: --format json gives a machine-readable report"},
		{"ciphers", "Z", true, "edgebench offers Go's cipher suites and prints the one negotiated: to pin one, pin it on the server"},
		{"client-cert", "E", true, "client certificates are not supported"},
	} {
		fs.Refuse(f.name, f.short, f.value, f.why)
	}
	protocol := fs.StringP("protocol", "f", "ALL", "SSL/TLS `protocol`: TLS1.2, TLS1.3 or ALL (SSL3, TLS1 and TLS1.1 are not offered)")
	fs.BoolVarP(&c.TLS.NoSNI, "no-sni", "I", false, "send no server name (SNI) in the TLS handshake")
	addModeFlags(fs, rf, env.Getenv, "ab")
	// As ab: no verification of the certificate (--cacert turns it on),
	// and a full handshake for each new connection.
	c.TLS.Insecure, c.TLS.NoResume = true, true
	tf := addTLSFlags(fs, c, false)

	rest, err := fs.Parse(args)
	if err != nil {
		return nil, nil, err
	}
	if *showVersion {
		abBanner(env.Stdout)
		return nil, nil, cli.ErrHelp
	}
	if rf.url, err = oneURL(rest, "edgebench ab [flags] http://hostname[:port]/path"); err != nil {
		return nil, nil, err
	}
	if !strings.Contains(rf.url, "://") {
		rf.url = "http://" + rf.url // as ab takes hostname[:port]/path
	}
	if err := rf.checkMode("ab"); err != nil {
		return nil, nil, err
	}
	c.URL = rf.url
	if err := applyTLSFlags(c, tf, fs); err != nil {
		return nil, nil, err
	}
	switch strings.ToUpper(*protocol) {
	case "ALL":
	case "TLS1.2", "TLS1.3":
		if strings.HasPrefix(strings.ToLower(rf.url), "https://") { // ab ignores it over http
			c.TLS.Version, _ = report.ParseTLSVersion(*protocol)
		}
	default:
		return nil, nil, cli.Usagef("-f %s: edgebench offers TLS1.2 and TLS1.3 (or ALL, either)", *protocol)
	}
	c.Dialect = loadgen.DialectAB
	c.Threads = 1 // ab's one poll loop
	c.LengthCheck = !af.variable
	c.UserAgent = "edgebench/" + version
	c.Timings = af.csv != "" || af.gnuplot != ""

	// The method and its body, as ab sets them.
	bodies := 0
	for _, on := range []bool{*head, *postfile != "", *putfile != ""} {
		if on {
			bodies++
		}
	}
	if bodies > 1 {
		return nil, nil, cli.Usagef("-i, -p and -u: cannot mix HEAD, POST and PUT")
	}
	c.Method = "GET"
	var ct []report.Header
	switch {
	case *head:
		c.Method = "HEAD"
	case *postfile != "" || *putfile != "":
		file, flag := *postfile, "-p"
		c.Method = "POST"
		if *putfile != "" {
			file, flag, c.Method = *putfile, "-u", "PUT"
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, cli.Usagef("%s: %v", flag, err)
		}
		c.Body = b
		ct = []report.Header{{Name: "Content-type", Value: *ctype}}
	}
	if *method != "" {
		c.Method = *method
	}
	c.Headers = append(append(append(append(c.Headers, cookie...), auth...), ct...), headers...)

	// -n and -t as ab takes them.
	switch {
	case c.Requests <= 0:
		return nil, nil, cli.Usagef("-n %d: invalid number of requests", c.Requests)
	case c.Connections <= 0:
		return nil, nil, cli.Usagef("-c %d: want at least 1", c.Connections)
	case c.Timeout <= 0:
		return nil, nil, cli.Usagef("-s 0: want a timeout such as 30 (a request with no timeout could hold the run forever)")
	case fs.Changed("timelimit") && c.Duration <= 0:
		return nil, nil, cli.Usagef("-t 0: want a time limit such as 30")
	}
	if c.Duration > 0 && !fs.Changed("requests") {
		c.Requests, af.impliedN = 50000, true
	}
	if err := maxTimeFlag(fs, c); err != nil {
		return nil, nil, err
	}
	if int64(c.Connections) > c.Requests {
		return nil, nil, cli.Usagef("-c %d: cannot use concurrency level greater than total number of requests (-n %d)", c.Connections, c.Requests)
	}
	if !af.quiet && c.Requests > 150 {
		af.heartbeat = max(c.Requests/10, 100)
	}
	rf.tool = abTool(rf, af)
	return rf, af, nil
}

func cmdAB(ctx context.Context, env *cli.Env, args []string) error {
	rf, _, err := parseABFlags(args, env)
	if err != nil {
		return err
	}
	return runLoadTest(ctx, env, rf)
}

// abTool prints what ab prints around its report: the banner, the
// "Benchmarking" line, the progress lines on stderr, and writes its -e
// and -g files.
func abTool(rf *runFlags, af *abFlags) *tool {
	t := &tool{banner: abBanner}
	t.before = func(w io.Writer) {
		fmt.Fprintf(w, "Benchmarking %s ", targetHost(rf.url))
		if af.heartbeat > 0 {
			fmt.Fprint(w, "(be patient)\n")
		} else {
			fmt.Fprint(w, "(be patient)...")
		}
		if af.verbosity >= 2 {
			req, _ := loadgen.Request(rf.cfg)
			head := req[:len(req)-len(rf.cfg.Body)]
			fmt.Fprintf(w, "INFO: %s header == \n---\n%s\n---\n", rf.cfg.Method, head)
		}
	}
	// A run that fails ends the "(be patient)..." line first: the error
	// (on stderr) then reads on a line of its own in a terminal.
	t.failed = func(w io.Writer) {
		if af.heartbeat == 0 {
			fmt.Fprintln(w)
		}
	}
	var printed int64 // the last "Completed" line's count
	t.progress = func(stderr io.Writer) func(loadgen.Progress) {
		printed = 0
		if af.heartbeat == 0 {
			return nil
		}
		return func(p loadgen.Progress) { printed = completedLines(stderr, printed, p.Completed, af.heartbeat) }
	}
	t.report = func(w, stderr io.Writer, r *report.LoadResult) error {
		if af.heartbeat > 0 {
			completedLines(stderr, printed, r.Completed, af.heartbeat)
			fmt.Fprintf(stderr, "Finished %d requests\n", r.Completed)
		} else {
			fmt.Fprint(w, "..done\n")
		}
		if af.impliedN && r.Completed+r.Errors.Total() >= rf.cfg.Requests && r.Duration < rf.cfg.Duration {
			// ab's trap: -t alone stops at 50000 requests. ab is silent.
			fmt.Fprintf(stderr, "edgebench ab: stopped at %d requests after %.3f s of -t %s, as ab does (-t implies -n 50000): give -n too to run the whole time\n",
				rf.cfg.Requests, r.Duration.Seconds(), rf.cfg.Duration)
		}
		fmt.Fprint(w, "\n\n")
		return report.WriteAB(w, r, report.ABOptions{NoConfidence: af.noConfidence, NoPercentiles: af.noPercentiles, VariableLength: af.variable})
	}
	t.files = func(r *report.LoadResult) error {
		for _, f := range []struct {
			path, what string
			write      func(io.Writer, *report.LoadResult) error
		}{{af.csv, "CSV", report.WriteABCSV}, {af.gnuplot, "gnuplot", report.WriteABGnuplot}} {
			if f.path == "" || r.Completed == 0 {
				continue
			}
			if err := writeFile(f.path, func(w io.Writer) error { return f.write(w, r) }); err != nil {
				return fmt.Errorf("cannot write the %s output file: %w", f.what, err)
			}
		}
		return nil
	}
	return t
}

// completedLines prints ab's "Completed N requests" for each multiple of
// every between the last one printed and done, and returns the last.
func completedLines(w io.Writer, printed, done, every int64) int64 {
	for n := printed + every; n <= done; n += every {
		fmt.Fprintf(w, "Completed %d requests\n", n)
		printed = n
	}
	return printed
}

// targetHost is the host of a URL as ab names it ("Benchmarking HOST").
func targetHost(url string) string {
	t, err := report.ParseTarget(url)
	if err != nil {
		return url
	}
	return t.Host
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
