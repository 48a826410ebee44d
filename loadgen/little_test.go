//go:build linux

package loadgen

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
)

// Little's law bounds every latency figure: a connection carries one
// request at a time (an HTTP/2 stream slot too), so over a window of T
// the latencies of its N requests add up to at most T, and the mean
// latency of c connections of s streams at X requests/s is at most
// c·s/X. In open loop a request's latency counts from its scheduled
// send: a schedule kept (no request waits behind a late one) keeps the
// same bound. wrk's correction for coordinated omission adds requests
// that a slow one held back, so wrk's own figure goes above it by what
// its loops stalled: wrk itself reads 1.27 times the bound on a quiet
// 2-core box (issue 28: 317 us at 40,179 req/s over 10 connections).

// durationUS reads a latency as the reports print it (317us, 317.00us,
// 2.45ms, 1.230s) in microseconds.
func durationUS(t *testing.T, s string) float64 {
	t.Helper()
	m := regexp.MustCompile(`^([0-9.]+)(us|ms|s)$`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%q is no latency", s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v * map[string]float64{"us": 1, "ms": 1e3, "s": 1e6}[m[2]]
}

// meansPrinted are the mean latencies r's reports print, by report:
// edgebench's text, its JSON, h2load's (HTTP/2) and wrk's (HTTP/1.x; with
// wrk's correction, in closed loop).
func meansPrinted(t *testing.T, r *report.LoadResult) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	var b strings.Builder
	report.WriteText(&b, r)
	m := regexp.MustCompile(`latency     min \S+  mean (\S+)`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatalf("no mean latency in\n%s", b.String())
	}
	out["text"] = durationUS(t, m[1])
	var j struct {
		Latency *struct {
			Mean float64 `json:"mean"`
		} `json:"latency_us"`
	}
	if b, err := json.Marshal(r.JSON()); err != nil || json.Unmarshal(b, &j) != nil {
		t.Fatalf("JSON: %v", err)
	}
	if j.Latency != nil {
		out["json"] = j.Latency.Mean
	}
	b.Reset()
	if r.H2 != nil {
		report.WriteH2load(&b, r)
		m = regexp.MustCompile(`time for request: +\S+ +\S+ +(\S+)`).FindStringSubmatch(b.String())
		if m == nil {
			t.Fatalf("no time for request in\n%s", b.String())
		}
		out["h2load"] = durationUS(t, m[1])
		return out
	}
	report.WriteWrk(&b, r, report.WrkOptions{})
	m = regexp.MustCompile(`    Latency +(\S+)`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatalf("no latency in\n%s", b.String())
	}
	out["wrk"] = durationUS(t, m[1])
	return out
}

// wrkBound runs real wrk with threads and conns on url for a second and
// returns its mean latency over the bound of its own rate: how much the
// box makes a load generator of OS threads stall now.
func wrkBound(t *testing.T, wrk, url string, threads, conns int) float64 {
	t.Helper()
	out, err := exec.Command(wrk, fmt.Sprintf("-t%d", threads), fmt.Sprintf("-c%d", conns), "-d1s", url).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	lat := regexp.MustCompile(`    Latency +(\S+)`).FindStringSubmatch(string(out))
	rps := regexp.MustCompile(`Requests/sec: +([0-9.]+)`).FindStringSubmatch(string(out))
	if lat == nil || rps == nil {
		t.Fatalf("wrk's report:\n%s", out)
	}
	x, _ := strconv.ParseFloat(rps[1], 64)
	return durationUS(t, lat[1]) / (float64(conns) / x * 1e6)
}

// TestLatencyObeysLittlesLaw is issue 28's item 1: wrk -t10 -c10 on a
// 2-core box printed a mean of 6.17 ms at 36,704 req/s where Little's
// law allows 272 us: ten event loops, goroutines blocked in epoll_wait
// on two Ps, waited for the runtime to hand them one, and their
// requests counted the wait. Every report's mean latency stays within
// the bound, for threads below and above the cores, closed and open
// loop, HTTP/1.1 and h2c, against nginx; wrk's corrected figure within
// wrkSlack of it. A figure over its bound is edgebench's fault when real
// wrk, run right after with the same threads and connections, stays
// within quiet of its own (wrk's corrected figure: when edgebench's
// ratio is over twice wrk's). A case is tried up to 3 times: it fails
// when it went over its bound each time, and real wrk kept to its own in
// at least 2 of them; else the box stalls every load generator now, and
// it is skipped loudly.
func TestLatencyObeysLittlesLaw(t *testing.T) {
	if raceEnabled || testing.Short() {
		// The race detector, or qemu in the 32-bit pass, slows the loops
		// many times over: their stalls would be theirs, not edgebench's.
		t.Skip("timing: not under the race detector nor in -short; make test runs it without either")
	}
	wrk := testenv.Tool(t, "wrk")
	srv := testenv.NginxWith(t, testenv.NginxConfig{TLS: true, KeepaliveRequests: 100_000_000})
	const (
		slack    = 1.02 // the histograms' 3 significant digits, and a schedule's last request
		openSlk  = 1.10 // open loop: a request late behind a slow one waits in no connection
		wrkSlack = 3.0  // wrk's correction: real wrk reads 1.27 on a quiet box
		quiet    = 1.6  // real wrk's ratio on a box quiet enough to hold the others to their bound
	)
	cores := runtime.GOMAXPROCS(0)
	above := max(5*cores, 10) // the seed's -t10 on 2 cores
	conns := above
	h1, h2c := "http://"+srv.Addr+"/index.html", "http://"+srv.H2C+"/index.html"
	for _, tc := range []struct {
		name    string
		cfg     Config
		threads int
	}{
		{"http/1.1 closed", Config{URL: h1, KeepAlive: true, Dialect: DialectWrk}, 1},
		{"http/1.1 closed", Config{URL: h1, KeepAlive: true, Dialect: DialectWrk}, above},
		{"http/1.1 open", Config{URL: h1, KeepAlive: true, Rate: 4000}, 1},
		{"http/1.1 open", Config{URL: h1, KeepAlive: true, Rate: 4000}, above},
		{"h2c closed", Config{URL: h2c, HTTP2: true, Streams: 2}, 1},
		{"h2c closed", Config{URL: h2c, HTTP2: true, Streams: 2}, above},
		{"h2c open", Config{URL: h2c, HTTP2: true, Rate: 4000}, 1},
		{"h2c open", Config{URL: h2c, HTTP2: true, Rate: 4000}, above},
	} {
		name := fmt.Sprintf("%s -t%d -c%d", tc.name, tc.threads, conns)
		cfg := tc.cfg
		cfg.Connections, cfg.Threads, cfg.Duration = conns, tc.threads, 1500*time.Millisecond
		t.Run(name, func(t *testing.T) {
			var busy, faults []string
			for range 3 {
				// The test's own garbage collected now, not by a GC
				// worker taking a loop's P during the run.
				runtime.GC()
				r := run(t, cfg)
				streams := max(cfg.Streams, 1)
				bound := float64(conns*streams) / r.RPS() * 1e6
				// Each figure over its bound, and the ratio of real
				// wrk's under which it is edgebench's fault.
				type excess struct {
					what   string
					ratio  float64
					culpit func(wrk float64) bool
				}
				var over []excess
				if r.Rate > 0 && r.RPS() < 0.95*r.Rate {
					over = append(over, excess{fmt.Sprintf("the schedule was not kept (%.0f of %.0f req/s)", r.RPS(), r.Rate), 0,
						func(wrk float64) bool { return wrk <= quiet }})
				}
				for rep, mean := range meansPrinted(t, r) {
					limit := slack
					switch {
					case rep == "wrk" && r.Rate == 0:
						limit = wrkSlack
					case r.Rate > 0:
						limit = openSlk
					}
					ratio := mean / bound
					if ratio <= limit {
						continue
					}
					e := excess{fmt.Sprintf("%s's mean %.0f us is %.2f times the bound %.0f us (%d connections x %d streams at %.0f req/s)",
						rep, mean, ratio, bound, conns, streams, r.RPS()), ratio, func(wrk float64) bool { return wrk <= quiet }}
					if limit == wrkSlack {
						// wrk's figure against wrk's: edgebench's stalls
						// no worse than twice real wrk's.
						e.culpit = func(wrk float64) bool { return ratio > 2*wrk }
					}
					over = append(over, e)
				}
				if len(over) == 0 {
					return
				}
				// Over the bound: edgebench's fault, unless the box
				// stalls real wrk as much right now.
				ratio := wrkBound(t, wrk, h1, tc.threads, conns)
				var what []string
				culpable := false
				for _, e := range over {
					what = append(what, e.what)
					culpable = culpable || e.culpit(ratio)
				}
				line := fmt.Sprintf("%s; real wrk -t%d -c%d read %.2f times its bound right after", strings.Join(what, "; "), tc.threads, conns, ratio)
				if culpable {
					faults = append(faults, line)
				} else {
					busy = append(busy, line)
				}
				time.Sleep(time.Second)
			}
			// Over the bound in every attempt: edgebench's fault when
			// real wrk kept to its own in most of them.
			if len(faults) >= 2 {
				t.Fatalf("over the bound in 3 attempts out of 3:\n%s\n%s", strings.Join(faults, "\n"), strings.Join(busy, "\n"))
			}
			t.Skipf("!!! the box stalls every load generator now, SKIPPING: %s", strings.Join(append(faults, busy...), " | "))
		})
	}
}
