//go:build linux

package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgebench/edgebench/loadgen/report"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rawServer serves each request read from a connection with respond, which
// writes whatever bytes it likes (and may close the connection by
// returning false). It counts the requests it read.
type rawServer struct {
	ln       net.Listener
	requests atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
}

func newRawServer(t *testing.T, respond func(n int64, req string, w io.Writer) (keep bool)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				bw := bufio.NewWriter(c)
				for {
					var req strings.Builder
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						req.WriteString(line)
						if line == "\r\n" {
							break
						}
					}
					n := s.requests.Add(1)
					keep := respond(n, req.String(), bw)
					if bw.Flush() != nil || !keep {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

// connServer hands every connection it accepts to handle, in a goroutine
// of its own, and closes it when handle returns. stop closes the listener
// and waits for the handlers (also done when the test ends).
func connServer(t testing.TB, handle func(c net.Conn)) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln.Addr().String(), serve(t, ln, handle)
}

// serve is connServer on a listener of the caller's (TLS, say).
func serve(t testing.TB, ln net.Listener, handle func(c net.Conn)) (stop func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	stop = sync.OnceFunc(func() { ln.Close(); wg.Wait() })
	t.Cleanup(stop)
	return stop
}

func (s *rawServer) url(path string) string { return "http://" + s.ln.Addr().String() + path }

func (s *rawServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func run(t *testing.T, cfg Config) *report.LoadResult {
	t.Helper()
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestKeepAliveCountsMatchServer(t *testing.T) {
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		io.WriteString(w, "HTTP/1.1 200 OK\r\nServer: raw/1\r\nContent-Length: 5\r\n\r\nhello")
		return true
	})
	r := run(t, Config{URL: srv.url("/x"), Connections: 8, Requests: 5000, KeepAlive: true})
	if r.Completed != 5000 || r.OK != 5000 || r.Failed() != 0 {
		t.Fatalf("completed %d ok %d failed %d, want 5000 5000 0 (errors %+v)", r.Completed, r.OK, r.Failed(), r.Errors)
	}
	if got := srv.requests.Load(); got != 5000 {
		t.Errorf("server saw %d requests, want 5000", got)
	}
	if r.Connects != 8 {
		t.Errorf("opened %d connections, want 8 (keep-alive)", r.Connects)
	}
	if r.Server != "raw/1" || r.DocLength != 5 || r.BodyBytes != 5*5000 {
		t.Errorf("server %q doc %d body %d", r.Server, r.DocLength, r.BodyBytes)
	}
	if r.StatusCodes[200] != 5000 || r.Latency.Count() != 5000 {
		t.Errorf("status %v, latency count %d", r.StatusCodes, r.Latency.Count())
	}
	var tl int64
	for _, s := range r.Timeline {
		tl += s.Completed
	}
	if tl != 5000 {
		t.Errorf("timeline holds %d completions, want 5000", tl)
	}
}

func TestNoKeepAliveOpensAConnectionPerRequest(t *testing.T) {
	var closeHeaders atomic.Int64
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		if strings.Contains(req, "Connection: close\r\n") {
			closeHeaders.Add(1)
		}
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		return false
	})
	r := run(t, Config{URL: srv.url("/"), Connections: 4, Requests: 400, KeepAlive: false})
	if r.Completed != 400 || r.Connects != 400 || closeHeaders.Load() != 400 {
		t.Fatalf("completed %d connects %d close headers %d, want 400 each (errors %+v)", r.Completed, r.Connects, closeHeaders.Load(), r.Errors)
	}
}

func TestServerConnectionCloseReconnects(t *testing.T) {
	// Every third response says Connection: close and the server hangs up.
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		if n%3 == 0 {
			io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbye")
			return false
		}
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nhey")
		return true
	})
	r := run(t, Config{URL: srv.url("/"), Connections: 3, Requests: 300, KeepAlive: true})
	if r.OK != 300 || r.Failed() != 0 {
		t.Fatalf("ok %d, errors %+v", r.OK, r.Errors)
	}
	if r.Connects < 90 {
		t.Errorf("only %d connections for 100 server closes", r.Connects)
	}
}

func TestChunkedAndHTTP10(t *testing.T) {
	cases := []struct {
		name, resp string
		keep       bool
		body       int64
	}{
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: 1\r\n\r\n", true, 31},
		{"http10-close", "HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nabcd", false, 4},
		{"http10-keepalive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\nabcd", true, 4},
		{"until-close", "HTTP/1.1 200 OK\r\n\r\nbody until the server closes", false, 28},
		{"interim-100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
				io.WriteString(w, tc.resp)
				return tc.keep
			})
			r := run(t, Config{URL: srv.url("/"), Connections: 2, Requests: 200, KeepAlive: true})
			if r.OK != 200 || r.Failed() != 0 {
				t.Fatalf("ok %d, errors %+v", r.OK, r.Errors)
			}
			if r.BodyBytes != 200*tc.body {
				t.Errorf("body bytes %d, want %d", r.BodyBytes, 200*tc.body)
			}
			if !tc.keep && r.Connects != 200 {
				t.Errorf("connects %d, want a new one per request (200)", r.Connects)
			}
			if tc.keep && r.Connects != 2 {
				t.Errorf("connects %d, want 2 kept alive", r.Connects)
			}
		})
	}
}

func TestRepliesWithoutBody(t *testing.T) {
	// 204 and 304 have no body whatever the headers say, nor does a reply
	// to HEAD: a parser that waited for those bytes would time out.
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		switch {
		case strings.HasPrefix(req, "HEAD "):
			io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
		case strings.Contains(req, "/204"):
			io.WriteString(w, "HTTP/1.1 204 No Content\r\n\r\n")
		default:
			io.WriteString(w, "HTTP/1.1 304 Not Modified\r\nContent-Length: 1000\r\n\r\n")
		}
		return true
	})
	for _, tc := range []struct{ method, path string }{{"HEAD", "/"}, {"GET", "/204"}, {"GET", "/304"}} {
		r := run(t, Config{URL: srv.url(tc.path), Method: tc.method, Connections: 2, Requests: 100, KeepAlive: true, Timeout: 5 * time.Second})
		if r.OK != 100 || r.Errors.Timeout != 0 || r.Connects != 2 {
			t.Errorf("%s %s: ok %d connects %d errors %+v", tc.method, tc.path, r.OK, r.Connects, r.Errors)
		}
	}
}

func TestLargeBodyStreams(t *testing.T) {
	const size = 24 << 20
	payload := strings.Repeat("z", 64<<10)
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", size)
		for left := size; left > 0; left -= len(payload) {
			io.WriteString(w, payload[:min(left, len(payload))])
		}
		return true
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := run(t, Config{URL: srv.url("/big"), Connections: 1, Requests: 4, KeepAlive: true, Timeout: 20 * time.Second})
	runtime.ReadMemStats(&after)
	if r.OK != 4 || r.BodyBytes != 4*size {
		t.Fatalf("ok %d body %d, errors %+v", r.OK, r.BodyBytes, r.Errors)
	}
	// The body goes through a fixed buffer: nothing near its size is
	// allocated (the server side here writes from one 64 KiB string).
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("allocated %d bytes for 96 MiB of bodies", grew)
	}
}

func TestTimeoutClosesAndReconnects(t *testing.T) {
	// The first request gets no answer; the rest do. One connection, so
	// the rest can only be done on a new one (with two, the replacement of
	// the first could do all the rest before the second times out).
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		if n == 1 {
			time.Sleep(400 * time.Millisecond)
			return false
		}
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	r := run(t, Config{URL: srv.url("/"), Connections: 1, Requests: 50, KeepAlive: true, Timeout: 100 * time.Millisecond})
	if r.Errors.Timeout != 1 {
		t.Errorf("timeouts %d, want 1", r.Errors.Timeout)
	}
	if r.OK != 49 {
		t.Errorf("ok %d, want 49 after reconnecting (errors %+v)", r.OK, r.Errors)
	}
	if r.Connects != 2 {
		t.Errorf("connects %d, want 2: the timed-out connection must be replaced", r.Connects)
	}
}

func TestResetsAndTruncationAreReadErrors(t *testing.T) {
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		if n%2 == 0 {
			// A body shorter than its Content-Length, then a hang-up.
			io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
			return false
		}
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789")
		return true
	})
	r := run(t, Config{URL: srv.url("/"), Connections: 1, Requests: 100, KeepAlive: true})
	if r.OK != 50 || r.Errors.Read != 50 {
		t.Fatalf("ok %d read errors %d, want 50 and 50 (errors %+v)", r.OK, r.Errors.Read, r.Errors)
	}

	// A server that resets every connection as soon as it has a request.
	addr, stop := connServer(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		c.(*net.TCPConn).SetLinger(0)
	})
	r = run(t, Config{URL: "http://" + addr + "/", Connections: 2, Requests: 20, KeepAlive: true})
	stop()
	if r.Errors.Read != 20 || r.OK != 0 {
		t.Errorf("resets: read errors %d ok %d, want 20 and 0 (errors %+v)", r.Errors.Read, r.OK, r.Errors)
	}
}

func TestStatusAndLengthFailures(t *testing.T) {
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		switch {
		case strings.Contains(req, "/missing"):
			io.WriteString(w, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
		case n%4 == 0:
			io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")
		default:
			io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd")
		}
		return true
	})
	r := run(t, Config{URL: srv.url("/missing"), Connections: 2, Requests: 40, KeepAlive: true})
	if r.Errors.Status != 40 || r.StatusCodes[404] != 40 || r.OK != 0 || r.Completed != 40 {
		t.Errorf("404s: status errors %d codes %v ok %d completed %d", r.Errors.Status, r.StatusCodes, r.OK, r.Completed)
	}
	r = run(t, Config{URL: srv.url("/doc"), Connections: 1, Requests: 40, KeepAlive: true, LengthCheck: true})
	if r.DocLength != 4 || r.Errors.Length != 10 || r.OK != 30 {
		t.Errorf("length check: doc %d length errors %d ok %d, want 4 10 30", r.DocLength, r.Errors.Length, r.OK)
	}
}

func TestRefusedTargetEndsRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens there now
	// Stopped by the refusal, or ended before it was noticed: the same.
	for _, cfg := range []Config{
		{URL: url, Connections: 4, Duration: time.Minute, KeepAlive: true},
		{URL: url, Connections: 4, Duration: 300 * time.Millisecond, KeepAlive: true},
		{URL: url, Connections: 1, Requests: 1},
	} {
		start := time.Now()
		r, err := Run(context.Background(), cfg)
		// Nothing was measured: the one thing to say is why.
		var de *DialError
		if r != nil || !errors.As(err, &de) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("result %+v, error %v: want a *DialError (connection refused)", r, err)
		}
		if want := "connection refused: " + strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"); err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("ran %v against a refusing port: it must give up", took)
		}
	}
}

func TestOpenLoopRateAndCoordinatedOmission(t *testing.T) {
	// The server stalls once for 300 ms. Closed loop hides the requests
	// that were never sent during the stall; open loop counts the delay
	// from when they were due.
	var stalled atomic.Bool
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		if n == 50 && stalled.CompareAndSwap(false, true) {
			time.Sleep(300 * time.Millisecond)
		}
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	r := run(t, Config{URL: srv.url("/"), Connections: 1, Duration: 2 * time.Second, Rate: 200, KeepAlive: true})
	// 400 requests are due in the window: the stall delays some, and the
	// connection catches up; a scheduler 5 % slow, or one that sends a
	// request more than is due, fails.
	if started := r.Completed + r.Drained.Requests; started < 380 || started > 400 {
		t.Errorf("%d requests started (%d completed, %d drained) in 2 s at 200 req/s, want 380 to 400", started, r.Completed, r.Drained.Requests)
	}
	// About 60 requests were due during the stall: their latency counts it.
	slow := r.Latency.Count() - countBelow(r.Latency, 100_000)
	if slow < 20 {
		t.Errorf("only %d requests over 100 ms: coordinated omission not corrected (p99 %d us)", slow, r.Latency.Quantile(.99))
	}
}

func countBelow(h *report.Histogram, v int64) int64 {
	var n int64
	h.ForEach(func(value, count int64) {
		if value < v {
			n += count
		}
	})
	return n
}

func TestWarmupExcluded(t *testing.T) {
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	r := run(t, Config{URL: srv.url("/"), Connections: 2, Requests: 500, Warmup: 300 * time.Millisecond, KeepAlive: true})
	if r.Completed != 500 {
		t.Errorf("completed %d measured requests, want 500", r.Completed)
	}
	if seen := srv.requests.Load(); seen <= 500 {
		t.Errorf("server saw %d requests: the warm-up sent none", seen)
	}
}

func TestCancelInterrupts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r, err := Run(ctx, Config{URL: srv.URL + "/", Connections: 2, Duration: time.Minute, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.Duration > 10*time.Second {
		t.Errorf("interrupted %v after %v", r.Interrupted, r.Duration)
	}
}

// quietServer answers every request on a connection with resp, reading
// into a fixed buffer: it allocates nothing per request, so the client's
// allocations can be counted.
func quietServer(t testing.TB, resp []byte) string {
	addr, _ := connServer(t, func(c net.Conn) {
		buf := make([]byte, 64<<10)
		tail := 0 // bytes of "\r\n\r\n" matched so far
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			for _, b := range buf[:n] {
				switch {
				case b == "\r\n\r\n"[tail]:
					tail++
				case b == '\r':
					tail = 1
				default:
					tail = 0
				}
				if tail == 4 {
					tail = 0
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}
		}
	})
	return "http://" + addr + "/"
}

func TestSteadyStateAllocatesNothingPerRequest(t *testing.T) {
	url := quietServer(t, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	mallocs := func(n int64) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		run(t, Config{URL: url, Connections: 2, Threads: 1, Requests: n, KeepAlive: true})
		runtime.ReadMemStats(&b)
		return b.Mallocs - a.Mallocs
	}
	mallocs(1000) // warm the server's connections and the runtime
	small, large := mallocs(2000), mallocs(42000)
	perReq := float64(int64(large)-int64(small)) / 40000
	t.Logf("mallocs: %d for 2000 requests, %d for 42000 (%.4f per extra request)", small, large, perReq)
	// Set-up and once-a-second timeline records allocate; requests do not.
	if perReq > 0.01 {
		t.Errorf("%.4f allocations per request in steady state, want 0", perReq)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{URL: "ftp://x/"},
		{URL: "https://127.0.0.1/"},
		{URL: "http:///nohost"},
		{URL: "http://u:p@127.0.0.1/"},
		{URL: "http://127.0.0.1:99999/"},
		{URL: "http://127.0.0.1/", Connections: -1},
		{URL: "http://127.0.0.1/", Method: "get me"},
		{URL: "http://127.0.0.1/", Rate: -5},
		{URL: "http://127.0.0.1/", Headers: []report.Header{{Name: "Bad Name", Value: "x"}}},
	} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestBuildRequest(t *testing.T) {
	cfg, tgt, err := Config{
		URL: "http://[::1]:8080/a?b=c", Method: "POST", Body: []byte("xyz"),
		Headers: []report.Header{{Name: "User-Agent", Value: "mine"}, {Name: "X-A", Value: "1"}},
	}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	got := string(buildRequest(cfg, tgt))
	want := "POST /a?b=c HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\nContent-Length: 3\r\nUser-Agent: mine\r\nX-A: 1\r\n\r\nxyz"
	if got != want {
		t.Errorf("request\n%q\nwant\n%q", got, want)
	}
}

// BenchmarkKeepAliveRequest measures one keep-alive request through the
// engine, against a server in the same process (its cost included).
func BenchmarkKeepAliveRequest(b *testing.B) {
	url := quietServer(b, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	b.ReportAllocs()
	b.ResetTimer()
	r, err := Run(context.Background(), Config{URL: url, Connections: 4, Threads: 1, Requests: int64(b.N), KeepAlive: true})
	if err != nil || r.OK != int64(b.N) {
		b.Fatalf("ok %d of %d: %v", r.OK, b.N, err)
	}
}

func TestTimedRunTimeline(t *testing.T) {
	srv := newRawServer(t, func(n int64, req string, w io.Writer) bool {
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	r := run(t, Config{URL: srv.url("/"), Connections: 3, Duration: 2 * time.Second, KeepAlive: true})
	if len(r.Timeline) != 2 {
		t.Fatalf("%d timeline seconds for a 2 s run: %+v", len(r.Timeline), r.Timeline)
	}
	var sum int64
	for i, s := range r.Timeline {
		if s.T != i || s.Completed == 0 || s.P50 == 0 || s.P99 < s.P50 {
			t.Errorf("second %d: %+v", i, s)
		}
		sum += s.Completed
	}
	if sum != r.Completed {
		t.Errorf("timeline sums to %d, completed %d", sum, r.Completed)
	}
	if r.Duration < 2*time.Second || r.Duration > 3*time.Second {
		t.Errorf("duration %v", r.Duration)
	}
}

// TestServerSpeaksFirst: a server that answers as soon as it accepts,
// before the request has come (or while a big one is still going out), and
// never closes. The engine sends the request on the edge that says the
// connection is up; the answer may come with that edge, with one that lets
// the rest of the request out, or after: each must be read.
func TestServerSpeaksFirst(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		body                  int
		connections, requests int
	}{
		// 100 connections dialled before the loop first waits: the
		// server has answered the first ones by then.
		{"before the request", 0, 100, 200},
		{"while a 32 MiB request goes out", 32 << 20, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, stop := connServer(t, func(c net.Conn) {
				// No FIN after the answer, so no edge after it: the
				// server reads until the client closes.
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				io.Copy(io.Discard, c)
			})
			cfg := Config{URL: "http://" + addr + "/", Connections: tc.connections, Requests: int64(tc.requests), Timeout: 2 * time.Second}
			if tc.body > 0 {
				cfg.Method, cfg.Body = "POST", make([]byte, tc.body)
			}
			r := run(t, cfg)
			stop()
			if r.OK != int64(tc.requests) || r.Errors.Total() != 0 {
				t.Errorf("ok %d errors %+v, want %d and none", r.OK, r.Errors, tc.requests)
			}
		})
	}
}

// A server that accepts each connection and at once resets it (SO_LINGER
// 0): the connections were up, so the requests fail with read or write
// errors, not connect errors, and the run is not refused (connect errors
// alone for a second end it).
func TestServerResetsWhatItAccepts(t *testing.T) {
	addr, stop := connServer(t, func(c net.Conn) { c.(*net.TCPConn).SetLinger(0) })
	r := run(t, Config{URL: "http://" + addr + "/", Connections: 50, Requests: 2000, Timeout: 2 * time.Second})
	stop()
	if r.OK != 0 || r.Errors.Connect != 0 || r.Errors.Read+r.Errors.Write != 2000 {
		t.Errorf("ok %d errors %+v, want 2000 read or write errors and no connect error", r.OK, r.Errors)
	}
}

// A server that says Connection: close closes first: the client reads its
// FIN before closing, as ab does, so the TIME_WAIT is the server's and not
// the client's port range's. A server that never closes costs the client at
// most --timeout, and the request stays a success.
func TestServerClosesFirst(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepAlive bool
		hold      time.Duration // how long the server keeps the connection open after the response
	}{
		{"no keep-alive", false, 150 * time.Millisecond},
		{"server refuses keep-alive", true, 150 * time.Millisecond},
		{"server never closes", false, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clientFirst atomic.Int64
			addr, stop := connServer(t, func(c net.Conn) {
				c.Read(make([]byte, 4096))
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				hold := min(tc.hold, time.Second)
				c.SetReadDeadline(time.Now().Add(hold))
				if _, err := c.Read(make([]byte, 1)); err == io.EOF {
					clientFirst.Add(1)
				}
			})
			timeout := 5 * time.Second
			if tc.hold > time.Second {
				timeout = 200 * time.Millisecond
			}
			r := run(t, Config{URL: "http://" + addr + "/", Connections: 1, Requests: 3, KeepAlive: tc.keepAlive, Timeout: timeout})
			stop()
			if r.OK != 3 || r.Errors.Total() != 0 {
				t.Errorf("ok %d errors %+v, want 3 and none", r.OK, r.Errors)
			}
			if tc.hold < time.Second && clientFirst.Load() != 0 {
				t.Errorf("the client closed first on %d of 3 connections", clientFirst.Load())
			}
		})
	}
}
