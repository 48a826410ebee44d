//go:build linux

package loadgen

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/target"
)

// builtinTarget serves edgebench's own target (/delay/MS, /bytes/N) and
// counts the requests it answered: the witness of these tests.
func builtinTarget(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var served atomic.Int64
	h := target.Handler("edgebench/test", nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		served.Add(1)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &served
}

// waitFor polls cond for up to 5 s: the server counts a request once its
// handler has returned, which may come after the client read the reply.
func waitFor(cond func() bool) bool {
	for range 250 {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// TestWindowIsNotStretchedByTheDrain is issue 9's case: 4 connections for
// 3 s on a page that takes most of the 2 s timeout (issue 9 had 1.9 s; 1.7
// s here, as 100 ms was too little room for a loaded machine running this
// under -race, where the 4 first requests timed out). The window is 3 s
// with the 4 requests that ended in it; the 4 in flight at its end (due at
// 3.4 s) are waited for (the server answers them) but reported apart.
func TestWindowIsNotStretchedByTheDrain(t *testing.T) {
	base, served := builtinTarget(t)
	cfg := Config{URL: base + "/delay/1700", Connections: 4, Duration: 3 * time.Second, Timeout: 2 * time.Second, KeepAlive: true}
	r := run(t, cfg)
	if r.Duration != cfg.Duration {
		t.Errorf("window %v, want the %v asked", r.Duration, cfg.Duration)
	}
	if r.Completed != 4 || r.OK != 4 || math.Abs(r.RPS()-4.0/3) > 0.005 {
		t.Errorf("window: %d completed, %d ok, %.2f req/s; want 4, 4 and 1.33", r.Completed, r.OK, r.RPS())
	}
	d := r.Drained
	if d.Requests != 4 || d.Completed != 4 || d.OK != 4 || d.StatusCodes[200] != 4 || d.Errors.Total() != 0 || d.Cut != 0 {
		t.Errorf("drained %+v, want 4 requests completed with 200", d)
	}
	if r.Latency.Count() != 4 || r.StatusCodes[200] != 4 || len(r.Timeline) > 3 {
		t.Errorf("the drained requests reached the window's figures: latency count %d, codes %v, timeline %+v",
			r.Latency.Count(), r.StatusCodes, r.Timeline)
	}
	if r.Bytes == 0 || d.Bytes != r.Bytes {
		t.Errorf("bytes: window %d, drained %d; the same 4 replies each", r.Bytes, d.Bytes)
	}
	if !waitFor(func() bool { return served.Load() == 8 }) {
		t.Errorf("the server answered %d requests, edgebench accounts for %d", served.Load(), r.Completed+d.Completed)
	}
}

// TestNoWindowLongerThanDuration: whatever the drain, warm-up or rate, the
// window a timed run reports is the duration asked, or shorter when -n or
// a cancel ended it first. There is no tolerance: the window ends at the
// planned deadline, not at an observed instant; a late tick of the event
// loop only moves a completion seen after the deadline to the drained
// part.
func TestNoWindowLongerThanDuration(t *testing.T) {
	base, _ := builtinTarget(t)
	for _, cfg := range []Config{
		{URL: base + "/delay/700", Connections: 4, Duration: time.Second},
		{URL: base + "/delay/400", Connections: 2, Duration: time.Second, Warmup: 300 * time.Millisecond},
		{URL: base + "/delay/300", Connections: 4, Duration: time.Second, Rate: 20},
		{URL: base + "/bytes/100", Connections: 2, Duration: time.Second, KeepAlive: true},
		{URL: base + "/delay/450", Connections: 2, Duration: time.Second, KeepAlive: true, WholeRequestTimeout: true, Timeout: 200 * time.Millisecond},
		{URL: base + "/bytes/100", Connections: 2, Duration: 10 * time.Second, Requests: 200, KeepAlive: true},
	} {
		r := run(t, cfg)
		name := fmt.Sprintf("%s c=%d warmup=%v rate=%v n=%d", cfg.URL[len(base):], cfg.Connections, cfg.Warmup, cfg.Rate, cfg.Requests)
		if r.Duration > cfg.Duration {
			t.Errorf("%s: window %v longer than -d %v", name, r.Duration, cfg.Duration)
		}
		if cfg.Requests == 0 && r.Duration != cfg.Duration {
			t.Errorf("%s: window %v, want %v", name, r.Duration, cfg.Duration)
		}
		if cfg.Requests > 0 && (r.Completed != cfg.Requests || r.Duration >= cfg.Duration) {
			t.Errorf("%s: %d completed in %v: -n ends the window", name, r.Completed, r.Duration)
		}
		if secs := int((cfg.Duration + time.Second - 1) / time.Second); len(r.Timeline) > secs {
			t.Errorf("%s: %d seconds of timeline in a %v window", name, len(r.Timeline), r.Duration)
		}
		var tl int64
		for _, s := range r.Timeline {
			tl += s.Completed
		}
		if tl != r.Completed {
			t.Errorf("%s: timeline holds %d completions, the window %d", name, tl, r.Completed)
		}
	}
}

// TestWarmupReachesNoFigure: the requests the warm-up started count in
// no figure, not even their bytes, connections or status codes; the
// server's count is window + drained + warm-up.
func TestWarmupReachesNoFigure(t *testing.T) {
	const reply = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	var conns atomic.Int64
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		io.WriteString(w, reply)
		return !strings.Contains(req, "Connection: close")
	})
	for _, keep := range []bool{true, false} {
		before := srv.requests.Load()
		conns.Store(0)
		r := run(t, Config{URL: srv.url("/"), Connections: 2, Duration: 500 * time.Millisecond, Warmup: 300 * time.Millisecond, KeepAlive: keep})
		if r.WarmupRequests == 0 {
			t.Fatalf("keepalive=%v: no warm-up request", keep)
		}
		if r.Bytes != r.Completed*int64(len(reply)) || r.BodyBytes != 5*r.Completed {
			t.Errorf("keepalive=%v: %d bytes (%d of body) for %d replies of %d: the warm-up's bytes are in", keep, r.Bytes, r.BodyBytes, r.Completed, len(reply))
		}
		wantConnects := int64(0) // opened by the warm-up, reused since
		if !keep {
			wantConnects = r.Completed + r.Errors.Socket()
		}
		if r.Connects != wantConnects {
			t.Errorf("keepalive=%v: %d connects in the window, want %d", keep, r.Connects, wantConnects)
		}
		if r.StatusCodes[200] != r.Completed || r.Latency.Count() != r.Completed || r.Failed() != 0 {
			t.Errorf("keepalive=%v: codes %v, latency count %d, completed %d, errors %+v", keep, r.StatusCodes, r.Latency.Count(), r.Completed, r.Errors)
		}
		total := r.Completed + r.Drained.Completed + r.WarmupRequests
		if !waitFor(func() bool { return srv.requests.Load()-before == total }) {
			t.Errorf("keepalive=%v: the server answered %d, edgebench accounts for %d", keep, srv.requests.Load()-before, total)
		}
	}
}

// TestWindowHooksAtTheWindowsEdges: the hooks the probe's window hangs on
// are called at the edges of the window the LoadResult reports, not before its
// start (the warm-up) nor after the drain.
func TestWindowHooksAtTheWindowsEdges(t *testing.T) {
	base, _ := builtinTarget(t)
	var started, ended []time.Time
	// Requests of 400 ms: the warm-up's end at 0.4 s, the window's at
	// 0.8 s, and 2 in flight at its end (0.95 s), answered at 1.2 s.
	cfg := Config{URL: base + "/delay/400", Connections: 2, Duration: 850 * time.Millisecond, Warmup: 100 * time.Millisecond,
		WindowStart: func() { started = append(started, time.Now()) },
		WindowEnd:   func() { ended = append(ended, time.Now()) }}
	r := run(t, cfg)
	if len(started) != 1 || len(ended) != 1 {
		t.Fatalf("hooks called %d and %d times, want once each", len(started), len(ended))
	}
	end := r.Start.Add(r.Duration)
	if started[0].Before(r.Start) || ended[0].Before(end) {
		t.Errorf("hooks at %v and %v, before the window %v..%v", started[0], ended[0], r.Start, end)
	}
	// The end is called at the deadline, not after the drain's 250 ms (a
	// loose bound: the machine may be busy).
	if r.Drained.Completed != 2 || r.Completed != 2 || ended[0].Sub(end) > 150*time.Millisecond {
		t.Errorf("end hook %v after the window's end (completed %d, drained %d)", ended[0].Sub(end), r.Completed, r.Drained.Completed)
	}
}

// slowBodyServer sends a response whose 20 KiB body comes in 20 pieces,
// pause apart, after stall before the first piece of piece number stallAt.
func slowBodyServer(t *testing.T, pause time.Duration, stallAt int, stall time.Duration) *rawServer {
	const pieces, piece = 20, 1024
	return newRawServer(t, func(n int64, req string, w io.Writer) bool {
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", pieces*piece)
		for i := range pieces {
			if i == stallAt {
				time.Sleep(stall)
			}
			w.Write([]byte(strings.Repeat("b", piece)))
			if f, ok := w.(interface{ Flush() error }); ok && f.Flush() != nil {
				return false
			}
			time.Sleep(pause)
		}
		return true
	})
}

// TestIdleTimeoutLetsABodyFlow: the default timeout is an idle timeout. A
// body that keeps coming for far longer than the timeout completes; a
// server that stops sending mid-body for the timeout fails it.
func TestIdleTimeoutLetsABodyFlow(t *testing.T) {
	// 20 pieces 50 ms apart: one second of body, a 300 ms timeout.
	flowing := slowBodyServer(t, 50*time.Millisecond, -1, 0)
	r := run(t, Config{URL: flowing.url("/"), Connections: 2, Requests: 2, KeepAlive: true, Timeout: 300 * time.Millisecond})
	if r.OK != 2 || r.Errors.Timeout != 0 || r.BodyBytes != 2*20*1024 {
		t.Errorf("flowing body: ok %d, errors %+v, body %d; want both complete", r.OK, r.Errors, r.BodyBytes)
	}
	if r.Latency.Min() < 900_000 {
		t.Errorf("latency %d us: the body took a second to come", r.Latency.Min())
	}

	// The same body with a 700 ms silence after its fifth piece.
	stalled := slowBodyServer(t, 10*time.Millisecond, 5, 700*time.Millisecond)
	r = run(t, Config{URL: stalled.url("/"), Connections: 1, Requests: 1, KeepAlive: true, Timeout: 300 * time.Millisecond})
	if r.Errors.Timeout != 1 || r.Completed != 0 || r.Bytes == 0 {
		t.Errorf("stalled body: errors %+v, completed %d, bytes %d; want one timeout after some bytes", r.Errors, r.Completed, r.Bytes)
	}
}

// TestWholeRequestTimeoutCountsAsWrk: with wrk's meaning, a response that
// takes the timeout or longer is counted when it comes, as completed and as
// a timeout, with its latency left out; the request is not cut, so the
// server answers every one.
func TestWholeRequestTimeoutCountsAsWrk(t *testing.T) {
	base, served := builtinTarget(t)
	r := run(t, Config{URL: base + "/delay/500", Connections: 2, Duration: 1200 * time.Millisecond, Timeout: 300 * time.Millisecond,
		KeepAlive: true, WholeRequestTimeout: true})
	if r.Completed != 4 || r.Errors.Timeout != 4 || r.OK != 0 || r.StatusCodes[200] != 4 {
		t.Errorf("completed %d, ok %d, errors %+v, codes %v; want 4 late responses, each a timeout", r.Completed, r.OK, r.Errors, r.StatusCodes)
	}
	if r.Latency.Count() != 0 {
		t.Errorf("%d latencies recorded: wrk leaves late responses out", r.Latency.Count())
	}
	// The 2 in flight at the window's end are answered at 1.5 s, when
	// the drain ends: completed or cut, the server handled each.
	total := r.Completed + r.Drained.Requests
	if r.Drained.Requests != 2 || !waitFor(func() bool { return served.Load() == total }) {
		t.Errorf("server handled %d, edgebench accounts for %d (drained %+v)", served.Load(), total, r.Drained)
	}
	// Fast responses are not timeouts.
	r = run(t, Config{URL: base + "/bytes/10", Connections: 2, Duration: 300 * time.Millisecond, Timeout: 300 * time.Millisecond,
		KeepAlive: true, WholeRequestTimeout: true})
	if r.OK != r.Completed || r.Errors.Total() != 0 || r.Latency.Count() != r.Completed {
		t.Errorf("fast: ok %d of %d, errors %+v", r.OK, r.Completed, r.Errors)
	}
	if _, err := Run(context.Background(), Config{URL: base + "/", Requests: 10, WholeRequestTimeout: true}); err == nil {
		t.Error("a whole-request timeout without a duration: no error")
	}
}

// TestDrainEndsAfterTheTimeout: a body still flowing when the window closes
// is waited for at most the timeout, then cut and counted as such.
func TestDrainEndsAfterTheTimeout(t *testing.T) {
	// 20 pieces 100 ms apart: two seconds of body.
	srv := slowBodyServer(t, 100*time.Millisecond, -1, 0)
	start := time.Now()
	r := run(t, Config{URL: srv.url("/"), Connections: 2, Duration: 300 * time.Millisecond, Timeout: 400 * time.Millisecond, KeepAlive: true})
	if r.Completed != 0 || r.Drained.Requests != 2 || r.Drained.Cut != 2 || r.Drained.Bytes == 0 {
		t.Errorf("completed %d, drained %+v; want 2 cut", r.Completed, r.Drained)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the run took %v: the drain must end 400 ms after the window", took)
	}
}

// TestLengthCheckIsOptIn: a dynamic page whose size varies is not failed
// by default (as wrk); ab's Length check is there when asked for.
func TestLengthCheckIsOptIn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html>%d</html>", rand.IntN(1_000_000)) // like PHP's rand()
	}))
	defer srv.Close()
	r := run(t, Config{URL: srv.URL + "/", Connections: 2, Requests: 400, KeepAlive: true})
	if r.OK != 400 || r.Failed() != 0 || r.DocLength < 13 {
		t.Errorf("default: ok %d, errors %+v, doc length %d; want all ok", r.OK, r.Errors, r.DocLength)
	}
	r = run(t, Config{URL: srv.URL + "/", Connections: 2, Requests: 400, KeepAlive: true, LengthCheck: true})
	if r.Errors.Length == 0 || r.OK+r.Errors.Length != 400 || !r.LengthCheck {
		t.Errorf("length check: ok %d, errors %+v", r.OK, r.Errors)
	}
}
