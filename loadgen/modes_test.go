package loadgen

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
)

// TestBuildRequestDialects pins the request of each dialect: ab's is
// HTTP/1.0 with its own headers after the user's, wrk's has Host and the
// user's headers only.
func TestBuildRequestDialects(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"ab", Config{URL: "http://127.0.0.1/index.html", Dialect: DialectAB, UserAgent: "edgebench/1"},
			"GET /index.html HTTP/1.0\r\nHost: 127.0.0.1\r\nUser-Agent: edgebench/1\r\nAccept: */*\r\n\r\n"},
		{"ab -k -p -T -C -H", Config{URL: "http://127.0.0.1:8080/f?x=1", Dialect: DialectAB, KeepAlive: true, Method: "POST", Body: []byte("a=1"),
			Headers: []report.Header{{Name: "Cookie", Value: "s=1"}, {Name: "Content-type", Value: "text/plain"}, {Name: "Host", Value: "example.org"}, {Name: "X-A", Value: "b"}}},
			"POST /f?x=1 HTTP/1.0\r\nConnection: Keep-Alive\r\nCookie: s=1\r\nContent-length: 3\r\nContent-type: text/plain\r\nHost: example.org\r\nX-A: b\r\n" +
				"User-Agent: edgebench\r\nAccept: */*\r\n\r\na=1"},
		{"wrk", Config{URL: "http://[::1]:8080/", Dialect: DialectWrk, KeepAlive: true, UserAgent: "edgebench/1", Headers: []report.Header{{Name: "X-A", Value: "b"}}},
			"GET / HTTP/1.1\r\nHost: [::1]:8080\r\nX-A: b\r\n\r\n"},
	} {
		got, err := Request(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: request\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

// nginxLike answers as nginx does: an HTTP/1.0 request is kept alive only
// when it asks with Connection: Keep-Alive, and the response says so.
func nginxLike(t *testing.T, honour bool) *rawServer {
	return newRawServer(t, func(n int64, req string, w io.Writer) bool {
		keep := honour && strings.Contains(strings.ToLower(req), "\r\nconnection: keep-alive\r\n")
		conn := "close"
		if keep {
			conn = "keep-alive"
		}
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nServer: raw/1\r\nContent-Length: 5\r\nConnection: %s\r\n\r\nhello", conn)
		return keep
	})
}

// TestABKeepAliveResponses checks ab's "Keep-Alive requests": the
// responses that said keep-alive, only those, whatever the client asked.
func TestABKeepAliveResponses(t *testing.T) {
	for _, tc := range []struct {
		name             string
		keep, honour     bool
		wantKA, connects func(r *report.LoadResult) int64
	}{
		{"-k", true, true, func(r *report.LoadResult) int64 { return r.Completed }, func(*report.LoadResult) int64 { return 3 }},
		{"no -k", false, true, func(*report.LoadResult) int64 { return 0 }, func(r *report.LoadResult) int64 { return r.Completed }},
		{"-k, server closes", true, false, func(*report.LoadResult) int64 { return 0 }, func(r *report.LoadResult) int64 { return r.Completed }},
	} {
		srv := nginxLike(t, tc.honour)
		r := run(t, Config{URL: srv.url("/"), Dialect: DialectAB, KeepAlive: tc.keep, Connections: 3, Requests: 300})
		if r.OK != 300 || r.KeepAliveResponses != tc.wantKA(r) || r.Connects != tc.connects(r) {
			t.Errorf("%s: ok %d, keep-alive responses %d (want %d), connects %d (want %d)", tc.name,
				r.OK, r.KeepAliveResponses, tc.wantKA(r), r.Connects, tc.connects(r))
		}
	}
}

// TestModeFigures checks the figures the ab and wrk reports add: the
// bytes written, wrk's per-thread completions per 100 ms, and ab's
// per-request timings, against the window's own counts.
func TestModeFigures(t *testing.T) {
	srv := nginxLike(t, true)
	cfg := Config{URL: srv.url("/"), Dialect: DialectAB, KeepAlive: true, Connections: 4, Threads: 2,
		Duration: 700 * time.Millisecond, Timings: true}
	r := run(t, cfg)
	req, _ := Request(cfg)
	if r.Completed == 0 || r.Sent != r.Completed*int64(len(req)) {
		t.Errorf("sent %d bytes for %d requests of %d bytes", r.Sent, r.Completed, len(req))
	}
	if len(r.ThreadRates) != 2 {
		t.Fatalf("%d threads' rates, want 2", len(r.ThreadRates))
	}
	var sum int64
	for _, slots := range r.ThreadRates {
		if len(slots) > 7 {
			t.Errorf("%d slots of 100 ms in a 700 ms window", len(slots))
		}
		for _, n := range slots {
			sum += int64(n)
		}
	}
	if sum != r.Completed {
		t.Errorf("threads' rates add up to %d, completed %d", sum, r.Completed)
	}
	if int64(len(r.Timings)) != r.Latency.Count() {
		t.Fatalf("%d timings, %d latencies", len(r.Timings), r.Latency.Count())
	}
	from, to := r.Start.UnixMicro(), r.Start.Add(r.Duration).UnixMicro()
	for _, tm := range r.Timings {
		if tm.Start < from || tm.Start+tm.Total > to || tm.Connect > tm.Total || tm.Wait > tm.Total || tm.Connect < 0 || tm.Wait < 0 {
			t.Fatalf("timing %+v outside the window %d..%d", tm, from, to)
		}
	}
	if r2 := run(t, Config{URL: srv.url("/"), Requests: 10}); r2.Timings != nil {
		t.Errorf("%d timings kept without Config.Timings", len(r2.Timings))
	}
}
