//go:build linux

package loadgen

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
)

// The HTTPS and HTTP/2 engine against real servers: nginx (TLS 1.2 and
// 1.3, h2 by ALPN, h2c) and caddy, their access logs the witnesses.

const tlsLogFormat = "$status $server_port $server_protocol $ssl_protocol $ssl_session_reused $connection"

// logLines waits until the access log has at least want lines (the server
// writes a line after each response) and returns the lines.
func logLines(t *testing.T, path string, want int) []string {
	t.Helper()
	var lines []string
	waitFor(func() bool {
		b, _ := os.ReadFile(path)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) == 0 {
			lines = nil
		}
		return len(lines) >= want
	})
	return lines
}

// served is what the server saw of a run: every request the run sent
// that ended, whatever part of the run it was in.
func served(r *report.LoadResult) int64 {
	return r.Completed + r.Drained.Completed + r.WarmupRequests
}

// TestHTTPSCountsMatchNginxAccessLog: over TLS 1.2 and 1.3, with and
// without keep-alive and resumption, and over HTTP/2 with and without TLS,
// the requests edgebench counts are those nginx logged, with the protocol,
// TLS version and resumption the log shows.
func TestHTTPSCountsMatchNginxAccessLog(t *testing.T) {
	srv := testenv.NginxWith(t, testenv.NginxConfig{TLS: true, LogFormat: tlsLogFormat})
	ca, err := os.ReadFile(srv.Certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	https := "https://localhost:" + strings.Split(srv.HTTPS, ":")[1] + "/index.html"
	cases := []struct {
		name         string
		cfg          Config
		proto, tlsv  string // in the log
		resumedMin   int64  // handshakes the log says resumed, at least
		fullOnly     bool   // no handshake resumed
		version      string // in the LoadResult
		streamsInLog bool
	}{
		{name: "keep-alive -n", cfg: Config{URL: https, Connections: 4, Requests: 2000, KeepAlive: true},
			proto: "HTTP/1.1", tlsv: "TLSv1.3", version: "TLSv1.3"},
		{name: "no keep-alive, resumption", cfg: Config{URL: https, Connections: 4, Requests: 300},
			proto: "HTTP/1.1", tlsv: "TLSv1.3", version: "TLSv1.3", resumedMin: 250},
		{name: "no keep-alive, no resumption", cfg: Config{URL: https, Connections: 4, Requests: 200, TLS: TLSConfig{NoResume: true}},
			proto: "HTTP/1.1", tlsv: "TLSv1.3", version: "TLSv1.3", fullOnly: true},
		{name: "TLS 1.2, no keep-alive, resumption", cfg: Config{URL: https, Connections: 4, Requests: 300, TLS: TLSConfig{Version: tls.VersionTLS12}},
			proto: "HTTP/1.1", tlsv: "TLSv1.2", version: "TLSv1.2", resumedMin: 250},
		{name: "TLS 1.2 server, timed, warm-up", cfg: Config{URL: "https://" + srv.HTTPS12 + "/index.html", Connections: 3, Duration: 500 * time.Millisecond, Warmup: 200 * time.Millisecond, KeepAlive: true},
			proto: "HTTP/1.1", tlsv: "TLSv1.2", version: "TLSv1.2"},
		{name: "h2 -n", cfg: Config{URL: https, Connections: 3, Streams: 10, Requests: 3000, HTTP2: true},
			proto: "HTTP/2.0", tlsv: "TLSv1.3", version: "TLSv1.3", streamsInLog: true},
		{name: "h2 timed", cfg: Config{URL: https, Connections: 2, Streams: 5, Duration: 500 * time.Millisecond, HTTP2: true},
			proto: "HTTP/2.0", tlsv: "TLSv1.3", version: "TLSv1.3", streamsInLog: true},
		{name: "h2c", cfg: Config{URL: "http://" + srv.H2C + "/index.html", Connections: 2, Streams: 8, Requests: 2000, HTTP2: true},
			proto: "HTTP/2.0", tlsv: "-", streamsInLog: true},
	}
	logged := 0
	for _, c := range cases {
		if strings.HasPrefix(c.cfg.URL, "https") {
			c.cfg.TLS.CACerts = ca
		}
		r, err := Run(context.Background(), c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := served(r)
		lines := logLines(t, srv.AccessLog, logged+int(want))
		mine := lines[logged:]
		logged = len(lines)
		if int64(len(mine)) != want || r.Failed() != 0 || r.Drained.Errors.Total() != 0 {
			t.Errorf("%s: nginx logged %d requests, edgebench counted %d (%d in the window, %d drained, %d warm-up); %d failed",
				c.name, len(mine), want, r.Completed, r.Drained.Completed, r.WarmupRequests, r.Failed())
		}
		// $ssl_session_reused is the connection's: count connections.
		resumedConns := map[string]bool{}
		for _, l := range mine {
			f := strings.Fields(l)
			if f[0] != "200" || f[2]+" "+f[3] != c.proto+" "+c.tlsv {
				t.Errorf("%s: log line %q, want 200 %s %s", c.name, l, c.proto, c.tlsv)
				break
			}
			if f[4] == "r" {
				resumedConns[f[5]] = true
			}
		}
		resumed := int64(len(resumedConns))
		switch {
		case c.version == "":
			if r.TLS != nil || r.Handshake != nil {
				t.Errorf("%s: TLS figures over cleartext", c.name)
			}
		case r.TLS == nil || r.TLS.Version != c.version || r.TLS.Cipher == "" || r.TLS.KeyBits != 256 || r.TLS.ServerName != "localhost" && !strings.Contains(c.cfg.URL, "127.0.0.1"):
			t.Errorf("%s: TLS %+v, want %s with a 256-bit ECDSA key", c.name, r.TLS, c.version)
		case r.TLS.Handshakes != r.Connects || r.Handshake.Count() != r.Connects:
			t.Errorf("%s: %d handshakes (%d timed) for %d connections", c.name, r.TLS.Handshakes, r.Handshake.Count(), r.Connects)
		case c.fullOnly && (resumed != 0 || r.TLS.Resumed != 0 || r.TLS.Resume):
			t.Errorf("%s: %d resumed in the log, %d counted, without resumption", c.name, resumed, r.TLS.Resumed)
		case r.WarmupRequests == 0 && r.Drained.Requests == 0 && r.TLS.Resumed != resumed:
			t.Errorf("%s: %d handshakes resumed, nginx says %d", c.name, r.TLS.Resumed, resumed)
		case resumed < c.resumedMin:
			t.Errorf("%s: %d of %d handshakes resumed, want at least %d", c.name, resumed, r.Connects, c.resumedMin)
		}
		if c.streamsInLog {
			if r.Protocol[:2] != "h2" || r.H2 == nil || r.H2.Streams != c.cfg.Streams || r.H2.MaxStreams != 128 || r.Connects != int64(c.cfg.Connections) {
				t.Errorf("%s: protocol %s, h2 %+v, %d connections", c.name, r.Protocol, r.H2, r.Connects)
			}
		}
		if r.Server != "nginx/1.22.1" && !strings.HasPrefix(r.Server, "nginx") || r.DocLength != 612 {
			t.Errorf("%s: server %q, document length %d", c.name, r.Server, r.DocLength)
		}
	}
}

// TestHTTPSAndH2AgainstCaddy: caddy, a second server, logs the requests
// edgebench counts, over HTTPS with HTTP/1.1 and HTTP/2, and h2c.
func TestHTTPSAndH2AgainstCaddy(t *testing.T) {
	srv := testenv.Caddy(t)
	ca, err := os.ReadFile(srv.Certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	logged := 0
	for _, c := range []struct {
		cfg   Config
		proto string
	}{
		{Config{URL: "https://" + srv.HTTPS + "/index.html", Connections: 3, Requests: 1500, KeepAlive: true, TLS: TLSConfig{CACerts: ca}}, `"proto":"HTTP/1.1"`},
		{Config{URL: "https://" + srv.HTTPS + "/index.html", Connections: 3, Requests: 200, TLS: TLSConfig{CACerts: ca}}, `"proto":"HTTP/1.1"`},
		{Config{URL: "https://localhost:" + strings.Split(srv.HTTPS, ":")[1] + "/index.html", Connections: 2, Streams: 10, Requests: 2000, HTTP2: true, TLS: TLSConfig{CACerts: ca}}, `"proto":"HTTP/2.0"`},
		{Config{URL: "http://" + srv.H2C + "/index.html", Connections: 2, Streams: 10, Duration: 300 * time.Millisecond, HTTP2: true}, `"proto":"HTTP/2.0"`},
	} {
		r, err := Run(context.Background(), c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		lines := logLines(t, srv.AccessLog, logged+int(served(r)))
		mine := lines[logged:]
		logged = len(lines)
		if int64(len(mine)) != served(r) || r.Failed() != 0 || r.Server != "Caddy" || r.DocLength != 612 {
			t.Errorf("%s (%s): caddy logged %d, edgebench counted %d; %d failed; server %q, length %d",
				c.cfg.URL, r.Protocol, len(mine), served(r), r.Failed(), r.Server, r.DocLength)
		}
		for _, l := range mine {
			if !strings.Contains(l, `"msg":"handled request"`) || !strings.Contains(l, c.proto) || !strings.Contains(l, `"status":200`) {
				t.Errorf("%s: log line %s, want %s and 200", c.cfg.URL, l, c.proto)
				break
			}
		}
	}
}

// TestBadCertificatesFailInOneLine: without --insecure, an expired
// certificate, one for another host and one of an unknown CA end the run
// at once with one line naming the problem; a server that speaks no TLS,
// or no HTTP/2, says so. With Insecure the same servers are measured.
func TestBadCertificatesFailInOneLine(t *testing.T) {
	dir := t.TempDir()
	certs := testenv.WebCertificates(t, dir)
	ca, _ := os.ReadFile(certs.CA)
	tlsServer := func(cert, key string, protos ...string) string {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return "https://" + tlsHTTPServer(t, &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: protos}) + "/"
	}
	expired := tlsServer(certs.Expired, certs.ExpiredKey)
	wrongHost := strings.Replace(tlsServer(certs.WrongHost, certs.WrongHostKey), "127.0.0.1", "localhost", 1)
	good := tlsServer(certs.Cert, certs.Key)
	// An HTTP/1.1 server answers a TLS hello, or HTTP/2's preface, as
	// nginx does: 400 and close.
	plain := badRequestServer(t)
	for _, c := range []struct {
		url   string
		tls   TLSConfig
		h2    bool
		wants []string
	}{
		{expired, TLSConfig{CACerts: ca}, false, []string{"certificate refused", "expired", "--insecure"}},
		{wrongHost, TLSConfig{CACerts: ca}, false, []string{"certificate refused", "valid for wrong.example, not localhost"}},
		{good, TLSConfig{}, false, []string{"certificate refused", "unknown authority", "--cacert"}},
		{"https://" + plain + "/", TLSConfig{CACerts: ca}, false, []string{"speaks no TLS"}},
		{good, TLSConfig{CACerts: ca}, true, []string{"speaks no HTTP/2", "ALPN", "--h2"}},
		{"http://" + plain + "/", TLSConfig{}, true, []string{"speaks no HTTP/2", "HTTP/1.x", "--h2c"}},
	} {
		start := time.Now()
		_, err := Run(context.Background(), Config{URL: c.url, Connections: 2, Duration: 5 * time.Second, KeepAlive: true, HTTP2: c.h2, TLS: c.tls})
		var he *HandshakeError
		if !errors.As(err, &he) {
			t.Errorf("%s (h2 %v): %v, want a HandshakeError", c.url, c.h2, err)
			continue
		}
		msg := err.Error()
		t.Log(msg)
		for _, w := range c.wants {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", c.url, msg, w)
			}
		}
		if strings.Contains(msg, "\n") || time.Since(start) > 2*time.Second {
			t.Errorf("%s: %q in %v: want one line, at once", c.url, msg, time.Since(start))
		}
	}
	for _, u := range []string{expired, wrongHost, good} {
		r, err := Run(context.Background(), Config{URL: u, Connections: 2, Requests: 20, KeepAlive: true, TLS: TLSConfig{Insecure: true}})
		if err != nil || r.OK != 20 {
			t.Errorf("%s with Insecure: %v", u, err)
		}
	}
}

// badRequestServer answers whatever it reads with a 400 and closes, as an
// HTTP/1.1 server does with bytes that are no request.
func badRequestServer(t *testing.T) string {
	t.Helper()
	addr, _ := connServer(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	})
	return addr
}

// TestTLSSteadyStateAllocations: on kept-alive connections, crypto/tls
// allocates one object each time it asks the socket for more bytes
// (golang/go#53142: readFromUntil's atLeastReader escapes), and nothing
// else is allocated per request but what the server's headers make the
// HTTP/2 decoder copy. The test counts the engine's socket Reads
// (readHook: over TLS every one comes from crypto/tls, whether it reaches
// the kernel or finds the socket drained) and allows, per extra request,
// exactly: one allocation per such Read over TLS, plus 5 per response
// against nginx over HTTP/2 (the header strings nginx 1.22 adds to the
// header table without ever referring to them, as over h2c), plus 0.01
// for the run's once-a-second records. Over HTTP/1.1 that is one per
// response; caddy's HTTP/2 adds nothing. Cleartext HTTP/1.1 allocates
// nothing (TestSteadyStateAllocatesNothingPerRequest).
func TestTLSSteadyStateAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under the race detector")
	}
	ngx := testenv.NginxWith(t, testenv.NginxConfig{TLS: true, LogFormat: "$status"})
	cdy := testenv.Caddy(t)
	ngxCA, _ := os.ReadFile(ngx.Certs.CA)
	cdyCA, _ := os.ReadFile(cdy.Certs.CA)
	for _, c := range []struct {
		name    string
		cfg     Config
		headers float64 // allocations per response for the headers
	}{
		{"nginx https", Config{URL: "https://" + ngx.HTTPS + "/index.html", TLS: TLSConfig{CACerts: ngxCA}}, 0},
		{"nginx https TLS 1.2", Config{URL: "https://" + ngx.HTTPS + "/index.html", TLS: TLSConfig{CACerts: ngxCA, Version: tls.VersionTLS12}}, 0},
		{"caddy https", Config{URL: "https://" + cdy.HTTPS + "/index.html", TLS: TLSConfig{CACerts: cdyCA}}, 0},
		{"caddy h2c", Config{URL: "http://" + cdy.H2C + "/index.html", HTTP2: true, Streams: 4}, 0},
		{"caddy h2", Config{URL: "https://" + cdy.HTTPS + "/index.html", HTTP2: true, Streams: 4, TLS: TLSConfig{CACerts: cdyCA}}, 0},
		{"nginx h2c", Config{URL: "http://" + ngx.H2C + "/index.html", HTTP2: true, Streams: 4}, 5},
		{"nginx h2", Config{URL: "https://" + ngx.HTTPS + "/index.html", HTTP2: true, Streams: 4, TLS: TLSConfig{CACerts: ngxCA}}, 5},
	} {
		measure := func(n int64) (mallocs uint64, reads int64) {
			cfg := c.cfg
			cfg.Connections, cfg.Threads, cfg.Requests, cfg.KeepAlive = 2, 1, n, true
			var a, b runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&a)
			readHook = func() { reads++ }
			run(t, cfg)
			readHook = nil
			runtime.ReadMemStats(&b)
			return b.Mallocs - a.Mallocs, reads
		}
		measure(500)
		m1, r1 := measure(2000)
		m2, r2 := measure(22000)
		perReq := float64(int64(m2)-int64(m1)) / 20000
		readsPerReq := float64(r2-r1) / 20000
		want := c.headers
		if strings.HasPrefix(c.cfg.URL, "https") {
			want += readsPerReq
		}
		t.Logf("%s: %.3f allocations and %.3f socket reads per extra request (%d and %d mallocs for 2000 and 22000)", c.name, perReq, readsPerReq, m1, m2)
		if perReq > want+0.01 {
			t.Errorf("%s: %.3f allocations per request in steady state, want at most %.3f", c.name, perReq, want)
		}
	}
}

// TestH2GoAwayRetried: nginx ends each HTTP/2 connection after 100
// requests with a GOAWAY; the streams it did not process are sent again on
// a new connection, none lost or failed, and the counts match its log.
func TestH2GoAwayRetried(t *testing.T) {
	srv := testenv.NginxWith(t, testenv.NginxConfig{TLS: true, LogFormat: "$status $connection", KeepaliveRequests: 100})
	ca, _ := os.ReadFile(srv.Certs.CA)
	logged := 0
	for _, cfg := range []Config{
		{URL: "https://" + srv.HTTPS + "/index.html", Connections: 2, Streams: 10, Requests: 2000, HTTP2: true, TLS: TLSConfig{CACerts: ca}},
		{URL: "http://" + srv.H2C + "/index.html", Connections: 3, Streams: 7, Duration: 500 * time.Millisecond, HTTP2: true},
	} {
		r := run(t, cfg)
		lines := logLines(t, srv.AccessLog, logged+int(served(r)))
		mine := lines[logged:]
		logged = len(lines)
		conns := map[string]int{}
		for _, l := range mine {
			conns[strings.Fields(l)[1]]++
		}
		t.Logf("%s: %d requests on %d connections, %d GOAWAYs, %d sent again", cfg.URL, len(mine), len(conns), r.H2.GoAways, r.H2.Retried)
		if int64(len(mine)) != served(r) || r.Failed() != 0 || r.Drained.Errors.Total() != 0 {
			t.Errorf("%s: nginx logged %d, edgebench counted %d, %d failed", cfg.URL, len(mine), served(r), r.Failed())
		}
		if r.H2.GoAways < int64(len(mine)/100)-int64(cfg.Connections) || r.Connects < r.H2.GoAways {
			t.Errorf("%s: %d GOAWAYs, %d connections for %d requests at 100 a connection", cfg.URL, r.H2.GoAways, r.Connects, len(mine))
		}
		for c, n := range conns {
			if n > 100 {
				t.Errorf("connection %s carried %d requests", c, n)
			}
		}
	}
}

// h2cServer is Go's HTTP/2 server in cleartext (prior knowledge) with
// handler, until the test ends.
func h2cServer(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestH2ResetStreamsCounted: streams the server resets are failed
// requests of their own class, counted by error code; the connection goes
// on.
func TestH2ResetStreamsCounted(t *testing.T) {
	var n atomic.Int64
	url := h2cServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%4 == 0 {
			panic(http.ErrAbortHandler) // RST_STREAM INTERNAL_ERROR
		}
		io.WriteString(w, "ok")
	})
	r := run(t, Config{URL: url + "/", Connections: 2, Streams: 5, Requests: 400, HTTP2: true})
	t.Logf("%d completed, errors %+v, resets %v, %d connections", r.Completed, r.Errors, r.H2.Resets, r.Connects)
	if r.Errors.Reset != 100 || r.H2.Resets["INTERNAL_ERROR"] != 100 || r.OK != 300 || r.Errors.Total() != 100 || r.Connects != 2 {
		t.Errorf("%d ok, errors %+v, resets %v, %d connections: want 300 ok and 100 INTERNAL_ERROR resets on 2 connections", r.OK, r.Errors, r.H2.Resets, r.Connects)
	}
	if n.Load() != 400 {
		t.Errorf("the server handled %d requests, want 400", n.Load())
	}
}

// TestH2RequestBodiesFollowFlowControl: request bodies larger than the
// server's windows go out as its WINDOW_UPDATEs allow, whole.
func TestH2RequestBodiesFollowFlowControl(t *testing.T) {
	var got, reqs atomic.Int64
	url := h2cServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Add(n)
		reqs.Add(1)
		io.WriteString(w, strconv.FormatInt(n, 10))
	})
	body := bytes.Repeat([]byte("b"), 3<<20) // 3 MB: the Go server's windows are 1 MB
	r := run(t, Config{URL: url + "/up", Method: "POST", Body: body, Connections: 2, Streams: 3, Requests: 12, HTTP2: true})
	if r.OK != 12 || got.Load() != 12*int64(len(body)) || r.Sent < 12*int64(len(body)) {
		t.Errorf("%d ok, the server read %d bytes of %d requests, %d sent: want 12 bodies of %d", r.OK, got.Load(), reqs.Load(), r.Sent, len(body))
	}
}

// TestHTTPSOpenLoopAndTimeouts: the open loop keeps its rate over TLS and
// HTTP/2; a server that never answers the handshake, or a stream, makes
// timeouts, not TLS failures.
func TestHTTPSOpenLoopAndTimeouts(t *testing.T) {
	srv := testenv.NginxWith(t, testenv.NginxConfig{TLS: true, LogFormat: "$status"})
	ca, _ := os.ReadFile(srv.Certs.CA)
	logged := 0
	for _, cfg := range []Config{
		{URL: "https://" + srv.HTTPS + "/index.html", Connections: 4, Rate: 400, Duration: time.Second, KeepAlive: true, TLS: TLSConfig{CACerts: ca}},
		// A handshake each: 8 connections, one request each 80 ms.
		{URL: "https://" + srv.HTTPS + "/index.html", Connections: 8, Rate: 100, Duration: time.Second, TLS: TLSConfig{CACerts: ca}},
		{URL: "https://" + srv.HTTPS + "/index.html", Connections: 2, Streams: 4, Rate: 400, Duration: time.Second, HTTP2: true, TLS: TLSConfig{CACerts: ca}},
	} {
		r := run(t, cfg)
		lines := logLines(t, srv.AccessLog, logged+int(served(r)))
		n := len(lines) - logged
		logged = len(lines)
		// The requests the window started: those still in flight at its
		// end were drained.
		started := r.Completed + r.Drained.Requests
		if int64(n) != served(r) || r.Failed() != 0 || started < int64(cfg.Rate*0.95) || started > int64(cfg.Rate*1.05)+1 {
			t.Errorf("%s (%s, keep-alive %v): %d started at %v/s over 1 s, nginx logged %d of %d, %d failed",
				cfg.URL, r.Protocol, cfg.KeepAlive, started, cfg.Rate, n, served(r), r.Failed())
		}
	}

	// A server that accepts connections and never says a word.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	r, err := Run(context.Background(), Config{URL: "https://" + ln.Addr().String() + "/", Connections: 2, Duration: 700 * time.Millisecond,
		Timeout: 200 * time.Millisecond, KeepAlive: true, TLS: TLSConfig{Insecure: true}})
	if err != nil || r.Errors.Timeout+r.Drained.Errors.Timeout < 4 || r.Errors.TLS != 0 || r.Completed != 0 {
		t.Errorf("silent server: %v, errors %+v: want timeouts only", err, r.Errors)
	}

	// An HTTP/2 server that never answers a stream.
	release := make(chan struct{})
	url := h2cServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	r = run(t, Config{URL: url + "/", Connections: 1, Streams: 3, Duration: 700 * time.Millisecond, Timeout: 200 * time.Millisecond, HTTP2: true})
	if r.Errors.Timeout+r.Drained.Errors.Timeout < 6 || (r.Errors.Timeout+r.Drained.Errors.Timeout)%3 != 0 || r.Completed != 0 {
		t.Errorf("silent streams: errors %+v, drained %+v: want the 3 streams of each connection timed out", r.Errors, r.Drained.Errors)
	}
}
