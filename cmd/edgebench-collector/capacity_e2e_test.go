package main

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// The capacity search through the fleet, with real parts only: nginx of
// known capacity, the collector process with its embedded broker and an
// SQLite file, an `edgebench agent` process, and `trigger ... capacity`.

// limitRPS is the capacity of capacityNginx: limit_req lets 200
// requests/s through and answers the others 503 at once. The burst of 20
// (100 ms at 200 req/s) absorbs the generator's jitter on a busy machine
// (late requests leave in a burst, and one 503 fails a trial under
// errors<0.1 %); it also lets a rate a little above 200 pass a short
// trial (20 requests more over the 1.5 s of a trial and its warm-up: 213
// req/s), but not the final trial (3.5 s: 205 req/s).
const limitRPS = 200

func capacityNginx(t *testing.T) testenv.NginxServer {
	return testenv.NginxWith(t, testenv.NginxConfig{HTTPExtra: fmt.Sprintf(
		"limit_req_zone $binary_remote_addr zone=cap:1m rate=%dr/s;\n\tlimit_req_status 503;\n\tlimit_req zone=cap burst=20 nodelay;", limitRPS)})
}

// trialEvent is a running event the agent sends after each trial: "trial
// N (KIND) at RATE req/s: pass|fail", the achieved rate, requests and
// failures in its progress. It is the device's own account of the
// search, independent of the result's list of trials.
var trialEvent = regexp.MustCompile(`^trial (\d+) \((\w+)\) at (\d+) req/s: (pass|fail)$`)

// showResult is the result as the collector stored it: `show --format
// json` of the collector's database.
func showResult(t *testing.T, f *testFleet, id string) wire.Result {
	t.Helper()
	colBin, _ := fleetBinaries(t)
	out, err := exec.Command(colBin, "show", "--db", f.db, "--format", "json", id).Output()
	if err != nil {
		t.Fatalf("show %s: %v\n%s", id, err, out)
	}
	var res wire.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("show %s: %v\n%s", id, err, out)
	}
	return res
}

// TestCapacitySearchThroughTheFleet: `trigger ... capacity` sent through
// the broker to an agent whose policy allows the rate and the time, which
// searches nginx limited to 200 req/s. The stored result is a capacity
// result whose answer is the limit within 15 % (the search's 5 % below
// the lowest failing rate, the burst's 3 % above the limit, and room for
// a busy 2-core box); its trials are the agent's, in the order it ran
// them, at the rates it offered, each judged by its own figures; the run
// page and compare show the figure.
//
// Other processes may hold the cores (make test runs packages side by
// side): the generator is then late, and as its latency counts from the
// scheduled send (coordinated omission corrected), a 50 ms stall fails a
// trial under p99<50ms well below nginx's limit. Such a search is checked
// for everything but its answer, and run again, up to 3 times; if each
// one was disturbed the test skips loudly.
func TestCapacitySearchThroughTheFleet(t *testing.T) {
	ng := capacityNginx(t)
	f := newTestFleet(t)
	// 400 req/s and 3 s a trial, 45 s in all: the search ramps past the
	// limit, and the test stays bounded.
	f.startAgent("pi-1", "one", "EDGEBENCH_POLICY_MAX_RATE=400", "EDGEBENCH_POLICY_MAX_DURATION=3s", "EDGEBENCH_POLICY_MAX_REPEAT=15")
	f.waitOnline("pi-1")
	var disturbed []string
	for range 3 {
		why := capacitySearch(t, f, "http://"+ng.Addr+"/")
		if why == "" || t.Failed() {
			return
		}
		disturbed = append(disturbed, why)
	}
	t.Skipf("!!! the machine delayed the generator in each of 3 searches (%s): SKIPPING the check of the answer against nginx's limit, which needs a quieter machine",
		strings.Join(disturbed, "; "))
}

// capacitySearch runs one search through the fleet and checks it. It
// returns why the search was disturbed (a trial below nginx's limit
// failed, by its own figures), or "" when it was not and its answer was
// checked.
func capacitySearch(t *testing.T, f *testFleet, url string) (disturbed string) {
	began := time.Now()
	trig := f.trigger("--device", "pi-1", "--fleet", "lab", "-c", "8", "--warmup", "500ms", "--label", "server=nginx",
		"--wait", "--max-wait", "90s",
		"capacity", "--slo", "p99<50ms,errors<0.1%", "--start", "60", "--trial", "1s", "--final", "3s", url)
	id := commandID(t, trig)
	select {
	case <-trig.done:
	case <-time.After(100 * time.Second):
		t.Fatalf("trigger --wait did not end:\n%s", trig.out.String())
	}
	took := time.Since(began)
	out := trig.out.String()
	t.Logf("the search through the fleet took %v\n%s", took.Round(100*time.Millisecond), out)
	if trig.err != nil {
		t.Fatalf("trigger: %v\n%s", trig.err, out)
	}
	if took > 60*time.Second {
		t.Errorf("the search took %v: want it under a minute", took)
	}

	st := f.commandStatus(id)
	if len(st.Results) != 1 {
		t.Fatalf("%d results stored for %s, want 1", len(st.Results), id)
	}
	res := showResult(t, f, st.Results[0].ID)
	c := res.Capacity
	if res.Kind != wire.KindCapacity || c == nil || res.Spec.Mode != "capacity" {
		t.Fatalf("stored result: kind %q, mode %q, capacity %+v: want a capacity result", res.Kind, res.Spec.Mode, c)
	}
	t.Logf("capacity %.1f req/s (nginx's limit %d): %s", c.CapacityRPS, limitRPS, c.Answer)
	if c.SLO != "p99<50ms,errors<0.1%" || c.Tolerance != 0.05 || res.Labels["server"] != "nginx" {
		t.Errorf("answer %+v, labels %v: want the SLO's, tolerance 0.05, server=nginx", *c, res.Labels)
	}
	// Other processes that hold the generator's cores make its trials
	// the generator's (the run verdict's rule): the search stops there,
	// "at least" no more than the limit, or not measured.
	if c.LimitedBy == "generator" {
		if c.Confirmed || c.CapacityRPS > 1.15*limitRPS || !strings.Contains(c.Answer, "other processes") {
			t.Errorf("a search the generator limited: %+v", *c)
		}
		return c.Answer
	}

	// The trials: as the agent announced them, one event each, in order.
	var evs []store.Event
	for _, e := range st.Events {
		if e.State == wire.StateRunning && strings.HasPrefix(e.Reason, "trial ") {
			evs = append(evs, e)
		}
	}
	if len(evs) != len(c.Trials) || len(c.Trials) < 4 {
		t.Fatalf("%d trials stored, %d announced by the agent", len(c.Trials), len(evs))
	}
	for i, tr := range c.Trials {
		m := trialEvent.FindStringSubmatch(evs[i].Reason)
		if m == nil {
			t.Fatalf("event %q", evs[i].Reason)
		}
		n, _ := strconv.Atoi(m[1])
		rate, _ := strconv.ParseFloat(m[3], 64)
		p := evs[i].Progress
		if n != i+1 || m[2] != tr.Kind || rate != math.Round(tr.OfferedRPS) || (m[4] == "pass") != tr.Pass || p == nil ||
			p.Completed != tr.Requests || p.Errors != tr.Errors || math.Abs(p.RPS-tr.AchievedRPS) > 0.05 {
			t.Errorf("stored trial %d %+v; the agent said %q %+v", i+1, tr, evs[i].Reason, p)
		}
	}
	// The ramp doubles from --start until a trial fails; every trial but
	// the final has the 1 s window and the 500 ms warm-up asked for.
	for i, tr := range c.Trials {
		if tr.Kind != "ramp" {
			break
		}
		if want := 60 * math.Pow(2, float64(i)); tr.OfferedRPS != want {
			t.Errorf("ramp trial %d at %v req/s, want %v", i+1, tr.OfferedRPS, want)
		}
	}
	for i, tr := range c.Trials {
		window := int64(1000)
		if tr.Kind == "final" {
			window = 3000
		}
		if tr.DurationMS != window || tr.WarmupMS != 500 {
			t.Errorf("trial %d (%s): window %d ms, warm-up %d ms; want %d and 500", i+1, tr.Kind, tr.DurationMS, tr.WarmupMS, window)
		}
		// nginx answers at once, 200 or 503: every rate is delivered.
		if tr.GenLimited || math.Abs(tr.AchievedRPS-tr.OfferedRPS) > 0.1*tr.OfferedRPS || tr.Requests < int64(tr.OfferedRPS*float64(tr.DurationMS)/1000*0.9) {
			t.Errorf("trial %d at %v req/s: achieved %v, %d requests, generator-limited %v", i+1, tr.OfferedRPS, tr.AchievedRPS, tr.Requests, tr.GenLimited)
		}
		// Each verdict is the SLO's, by the trial's own figures.
		meets := tr.P99US < 50_000 && float64(tr.Errors) < 0.001*float64(tr.Requests)
		if tr.Pass != meets {
			t.Errorf("trial %d at %v req/s: pass %v with p99 %d µs and %d errors of %d", i+1, tr.OfferedRPS, tr.Pass, tr.P99US, tr.Errors, tr.Requests)
		}
		// Over the limit and its burst, nginx's 503s fail the trial,
		// however busy the machine.
		if tr.OfferedRPS > 1.15*limitRPS && (tr.Pass || tr.Errors == 0) {
			t.Errorf("trial %d at %v req/s, over nginx's limit: pass %v, %d errors", i+1, tr.OfferedRPS, tr.Pass, tr.Errors)
		}
		if tr.OfferedRPS < limitRPS && !tr.Pass && disturbed == "" {
			disturbed = fmt.Sprintf("trial %d at %v req/s failed: p99 %v, %d errors of %d", i+1, tr.OfferedRPS,
				time.Duration(tr.P99US)*time.Microsecond, tr.Errors, tr.Requests)
		}
	}
	// The final trial's run is stored when it confirmed the answer.
	final := c.Trials[len(c.Trials)-1]
	confirmed := c.Confirmed && final.Kind == "final" && final.Pass && final.OfferedRPS == c.CapacityRPS
	if c.Confirmed != confirmed || (len(res.Runs) == 1) != confirmed ||
		(confirmed && res.Runs[0].Completed != final.Requests) {
		t.Errorf("confirmed %v, last trial %+v, %d runs: want the confirming final trial last and its run stored", c.Confirmed, final, len(res.Runs))
	}

	// The run page says the answer and draws every trial.
	code, page := httpGet(t, "http://"+f.web+"/runs/"+res.ID)
	if code != 200 || !strings.Contains(page, `<p id="capacity">`+html.EscapeString(c.Answer)+`</p>`) ||
		!strings.Contains(page, fmt.Sprintf("%.0f req/s", c.CapacityRPS)) || !strings.Contains(page, `id="capacity-charts"`) {
		t.Errorf("the run page (%d) does not show the capacity %q:\n%s", code, c.Answer, page)
	}
	// compare over the device (this command's result: the test may
	// search more than once): the CLI's JSON, the API's text and
	// trigger --wait's, whose last column is the capacity.
	if confirmed {
		colBin, _ := fleetBinaries(t)
		raw, err := exec.Command(colBin, "compare", "--db", f.db, "--by", "device", "--device", "pi-1", "--cmd", id,
			"--metric", "capacity", "--format", "json").Output()
		if err != nil {
			t.Fatalf("compare: %v\n%s", err, raw)
		}
		var cmp compare.Comparison
		if err := json.Unmarshal(raw, &cmp); err != nil {
			t.Fatalf("compare: %v\n%s", err, raw)
		}
		if len(cmp.Tables) != 1 || cmp.Tables[0].Spec.Mode != "capacity" || len(cmp.Tables[0].Groups) != 1 ||
			cmp.Tables[0].Groups[0].Stats["capacity"].N != 1 || cmp.Tables[0].Groups[0].Stats["capacity"].Median != c.CapacityRPS {
			t.Errorf("compare --format json does not list the capacity %v:\n%s", c.CapacityRPS, raw)
		}
		code, text := httpGet(t, "http://"+f.web+"/api/compare?by=device&device=pi-1&metric=capacity&cmd="+id)
		for what, text := range map[string]string{"/api/compare": text, "trigger --wait": out} {
			if !hasCapacityColumn(text, "lab/pi-1", fmt.Sprintf("%.2f", c.CapacityRPS)) {
				t.Errorf("%s (%d) does not list the capacity %.2f:\n%s", what, code, c.CapacityRPS, text)
			}
		}
	}
	if disturbed != "" {
		t.Logf("disturbed: %s", disturbed)
		return disturbed
	}
	// The answer: nginx's limit, bracketed by the SLO and confirmed.
	if c.LimitedBy != "slo" || c.AtLeast || !confirmed {
		t.Errorf("answer %+v: want it bracketed by the SLO and confirmed by the final trial", *c)
	}
	if dev := math.Abs(c.CapacityRPS-limitRPS) / limitRPS; dev > 0.15 {
		t.Errorf("capacity %.1f req/s, %.0f %% from nginx's limit of %d", c.CapacityRPS, dev*100, limitRPS)
	}
	return ""
}

// hasCapacityColumn: text has a table whose header ends in "capacity"
// and whose row of group ends in want.
func hasCapacityColumn(text, group, want string) bool {
	header := false
	for _, line := range strings.Split(text, "\n") {
		fs := strings.Fields(line)
		switch {
		case len(fs) < 2:
		case fs[0] == "device" && fs[len(fs)-1] == "capacity":
			header = true
		case header && fs[0] == group:
			return fs[len(fs)-1] == want
		}
	}
	return false
}

// countingTarget is a loopback listener that counts the connections made
// to it and closes them: a refused command must make none.
func countingTarget(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/", &n
}

// TestCapacityOverTheAgentsCapsIsRefused: a capacity search that asks
// more than the agent's policy allows (a rate over max_rate, a trial or a
// final trial over max_duration, a search longer than max_duration x
// max_repeat) is refused by the agent before it sends a request, and the
// reason reaches the collector: in the command's events and in trigger
// --wait's output and exit status.
func TestCapacityOverTheAgentsCapsIsRefused(t *testing.T) {
	f := newTestFleet(t)
	u, conns := countingTarget(t)
	f.startAgent("pi-1", "one", "EDGEBENCH_POLICY_MAX_RATE=300", "EDGEBENCH_POLICY_MAX_DURATION=2s", "EDGEBENCH_POLICY_MAX_REPEAT=5")
	f.waitOnline("pi-1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-rate", "1000"}, "max rate 1000 over cap 300"},
		{[]string{"--start", "500"}, "start rate 500 over cap 300"},
		{[]string{"--trial", "5s"}, "trial 5s over cap 2s"},
		{[]string{"--final", "5s"}, "final trial 5s over cap 2s"},
		{[]string{"--budget", "1m"}, "budget 1m0s over cap 10s (max_duration x max_repeat)"},
		{[]string{"--warmup", "5s"}, "warmup 5s over cap 2s"},
	} {
		args := append([]string{"--device", "pi-1", "--fleet", "lab", "-c", "2", "--wait", "--max-wait", "30s",
			"capacity", "--slo", "p99<50ms"}, c.args...)
		trig := f.trigger(append(args, u)...)
		id := commandID(t, trig)
		select {
		case <-trig.done:
		case <-time.After(40 * time.Second):
			t.Fatalf("%v: trigger --wait did not end:\n%s", c.args, trig.out.String())
		}
		out := trig.out.String()
		if trig.err == nil || !strings.Contains(out, "lab/pi-1: rejected ("+c.want) {
			t.Errorf("%v: trigger --wait ended %v, want the refusal %q said:\n%s", c.args, trig.err, c.want, out)
		}
		st := f.commandStatus(id)
		if n := len(st.Events); n == 0 || st.Events[n-1].State != wire.StateRejected || !strings.Contains(st.Events[n-1].Reason, c.want) {
			t.Errorf("%v: the collector's events %+v, want rejected: %s", c.args, st.Events, c.want)
		}
		if len(st.Results) != 0 {
			t.Errorf("%v: %d results stored for a refused command", c.args, len(st.Results))
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the refused searches opened %d connections to the target", n)
	}
}
