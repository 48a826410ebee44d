package loadgen

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
)

// Config describes one load test.
type Config struct {
	URL         string
	Method      string          // default GET
	Headers     []report.Header // added to, or replacing, the defaults
	Body        []byte
	Connections int           // default 1
	Threads     int           // event loops; 0: one per CPU, at most Connections
	Requests    int64         // stop after this many measured requests; 0: no limit
	Duration    time.Duration // measured window; 0 with Requests 0: 10 s
	// MaxTime bounds a run of Requests without a Duration: when it is
	// over, the requests in flight are cut (Drained.Cut) and the run
	// ends, however many of Requests were sent, so that a server that
	// never ends a response (endless headers, 100 Continue for ever, a
	// body at a byte a second, GOAWAY after GOAWAY) cannot hold the run.
	// 0: DefaultMaxTime; negative: no bound.
	MaxTime   time.Duration
	Rate      float64 // open loop requests/s over all connections; 0: closed loop
	KeepAlive bool    // reuse connections (wrk); false: one connection per request (ab without -k)
	// Timeout is an idle timeout (default 2 s): a request fails when the
	// server sends nothing for that long, whether it is connecting (a
	// connect error), waiting for the first byte or between two reads of
	// the body (a timeout); a body still flowing never times out. ab's -s
	// is this timeout at 30 s. With WholeRequestTimeout it is wrk's instead.
	Timeout time.Duration
	// WholeRequestTimeout gives Timeout wrk's meaning: a response that
	// takes Timeout or longer from its first byte written counts as
	// completed and as a timeout error, its latency left out of the
	// histograms and the timeline; no request is cut for being slow. It
	// needs a Duration: a request that never ends is cut only when the
	// drain after the window is over.
	WholeRequestTimeout bool
	// Warmup runs before the measured window: the requests it starts are
	// in no figure of the LoadResult (only WarmupRequests counts them).
	Warmup time.Duration
	// LengthCheck counts a 2xx body whose length differs from the first
	// one as a failure (ab's "Length"); off by default, as in wrk, so a
	// dynamic page whose size varies is not half failed.
	LengthCheck bool
	// Addrs, when set, are the only addresses dialled (already resolved and
	// vetted by a caller's policy); otherwise the URL's host is resolved.
	Addrs []net.IP
	// UserAgent is the User-Agent of ab's request (DialectAB) unless a
	// header replaces it; the other dialects send none.
	UserAgent string
	// Dialect is the wording of the request: edgebench's own, ab's or
	// wrk's.
	Dialect Dialect
	// TLS configures the connections to an https URL.
	TLS TLSConfig
	// HTTP2 speaks HTTP/2: negotiated by ALPN over TLS for an https URL,
	// in cleartext with prior knowledge (h2c) for an http one. Its
	// connections carry many requests whatever KeepAlive says.
	HTTP2 bool
	// Streams is the number of concurrent HTTP/2 streams per connection
	// (h2load's -m); default 1. Each stream is one request at a time: a
	// closed-loop test keeps Connections*Streams requests in flight.
	Streams int
	// Timings keeps every measured request's timings in LoadResult.Timings,
	// as ab does for its -e and -g files (32 bytes a request).
	Timings bool
	// Progress, when set, is called about once a second during the run.
	Progress func(Progress)
	// WindowStart and WindowEnd, when set, are called when the measured
	// window opens (after the warm-up) and when it closes (at the end of
	// Duration, when the last of Requests ends, or on cancel), so that a
	// recording of the machine covers the same window. They are called
	// once each, from Run's goroutine, never from the engine's loops.
	WindowStart, WindowEnd func()
}

// Dialect is the request a load test sends, worded as a tool words it.
type Dialect uint8

const (
	// DialectEdgebench is wrk's minimal HTTP/1.1 request (Host, then the
	// headers of Config); without keep-alive it asks for Connection: close.
	// Every header costs the server time to parse: a User-Agent and an
	// Accept cost one nginx worker 10 % of its requests per second.
	DialectEdgebench Dialect = iota
	// DialectAB is ab 2.3's request: HTTP/1.0, "Connection: Keep-Alive"
	// only with keep-alive (HTTP/1.0 closes by default), the body's
	// "Content-length", the headers of Config in their order, then Host,
	// User-Agent and Accept unless a header of Config replaced them.
	DialectAB
	// DialectWrk is wrk 4's request: HTTP/1.1 with Host, the headers of
	// Config and, with a body, its Content-Length; no User-Agent or Accept.
	DialectWrk
)

// Limits that keep a test inside what one process can hold.
const (
	MaxConnections = 100_000
	MaxBodyBytes   = 64 << 20
	// MinRate is the lowest open-loop rate, requests/s: below it the time
	// between one connection's requests overflows.
	MinRate = 1e-3
	// DefaultMaxTime is Config.MaxTime's default.
	DefaultMaxTime = 10 * time.Minute
)

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("invalid load test")

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
}

// defaultPort is the port of a URL of the scheme that gives none.
func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// MaxStreams bounds Config.Streams.
const MaxStreams = 1000

// withDefaults validates c and fills in defaults.
func (c Config) withDefaults() (Config, report.Target, error) {
	t, err := report.ParseTarget(c.URL)
	if err != nil {
		return c, t, configErr("%v", err)
	}
	if c.Method == "" {
		c.Method = "GET"
	}
	for _, r := range c.Method {
		if r < 'A' || r > 'Z' {
			return c, t, configErr("method %q: want an upper-case token such as GET", c.Method)
		}
	}
	if c.Connections == 0 {
		c.Connections = 1
	}
	switch {
	case c.Connections < 0 || c.Connections > MaxConnections:
		return c, t, configErr("connections %d: want 1..%d", c.Connections, MaxConnections)
	case c.Threads < 0:
		return c, t, configErr("threads %d: want >= 0", c.Threads)
	case c.Requests < 0:
		return c, t, configErr("requests %d: want >= 0", c.Requests)
	case c.Duration < 0:
		return c, t, configErr("duration %v: want >= 0", c.Duration)
	case !(c.Rate == 0 || c.Rate >= MinRate && c.Rate <= math.MaxFloat64):
		return c, t, configErr("rate %v: want 0 (closed loop) or a finite rate of at least %v requests/s", c.Rate, MinRate)
	case c.Timeout < 0:
		return c, t, configErr("timeout %v: want >= 0", c.Timeout)
	case c.Warmup < 0:
		return c, t, configErr("warmup %v: want >= 0", c.Warmup)
	case len(c.Body) > MaxBodyBytes:
		return c, t, configErr("body of %d bytes: the limit is %d", len(c.Body), MaxBodyBytes)
	}
	if c.Streams == 0 {
		c.Streams = 1
	}
	switch {
	case c.Streams < 0 || c.Streams > MaxStreams:
		return c, t, configErr("streams %d: want 1..%d", c.Streams, MaxStreams)
	case c.Streams > 1 && !c.HTTP2:
		return c, t, configErr("%d streams per connection: concurrent streams are HTTP/2's (HTTP/1.1 has one request at a time per connection)", c.Streams)
	case c.HTTP2 && c.Dialect == DialectAB:
		return c, t, configErr("HTTP/2 with ab's request: ab speaks HTTP/1.0")
	}
	if err := c.checkTLS(t); err != nil {
		return c, t, err
	}
	if c.Requests > 0 && c.Requests < int64(c.Connections) {
		// ab refuses this too: some connections would never send.
		c.Connections = int(c.Requests)
	}
	if c.Duration == 0 && c.Requests == 0 {
		c.Duration = 10 * time.Second
	}
	switch {
	case c.Duration > 0:
		c.MaxTime = 0 // the Duration bounds the run
	case c.MaxTime == 0:
		c.MaxTime = DefaultMaxTime
	case c.MaxTime < 0:
		c.MaxTime = 0
	}
	if c.WholeRequestTimeout && c.Duration == 0 {
		return c, t, configErr("a whole-request timeout (wrk's) needs a duration: a request that never ends would hold the run")
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Second
	}
	for _, h := range c.Headers {
		if _, err := report.ParseHeader(h.Name + ": " + h.Value); err != nil {
			return c, t, configErr("%v", err)
		}
	}
	return c, t, nil
}

// pendBase is the room a connection's pending output has beyond its
// requests: for the HTTP/2 frames it answers the server's with (window
// updates, acknowledgements: h2MaxControl bounds those too) and TLS's
// own records.
const pendBase = 64 << 10

// pendBound is the most a connection keeps for its socket to take:
// pendBase and twice what its requests take (request bytes on each of
// streams; twice, for TLS's overhead and a request sent again).
func pendBound(streams, request int) int { return pendBase + 2*streams*request }

// h2Request0 is what an HTTP/2 request adds to its header block: its
// body in DATA frames, the frame headers.
func h2Request0(body int) int { return body + 9*(body/h2FrameMax+2) }

// What MemoryEstimate counts, from a measure: 1,024 connections of 1,000
// HTTP/2 streams each against a server that answers nothing peaked at
// 227 MB of RSS (222 bytes a stream, the process included).
const (
	memPerStream  = 256      // a stream's slot and its request's state
	memPerConn    = 16 << 10 // a connection's state, its parser's and HPACK's buffers
	memPerTLSConn = 64 << 10 // crypto/tls's records and handshake state
	memProcess    = 32 << 20 // the process, its event loops' buffers and histograms
)

// MemoryEstimate is the most memory a run of c should take, in bytes:
// its connections' and streams' state and, as a server that reads
// nothing may make each connection keep it, the bound of their pending
// output. A device checks it against the memory it has before it runs
// a test it was sent.
func MemoryEstimate(c Config) (int64, error) {
	c, t, err := c.withDefaults()
	if err != nil {
		return 0, err
	}
	req := len(buildRequest(c, t))
	if c.HTTP2 {
		req += h2Request0(len(c.Body))
	}
	per := int64(memPerConn) + int64(c.Streams)*memPerStream + int64(pendBound(c.Streams, req))
	if t.Scheme == "https" {
		per += memPerTLSConn
	}
	return memProcess + int64(c.Connections)*per, nil
}

// Request returns the bytes every request of the load test c sends, as
// ab -v 2 shows them.
func Request(c Config) ([]byte, error) {
	c, t, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	return buildRequest(c, t), nil
}

// buildRequest serialises the request once; every send reuses the bytes.
func buildRequest(c Config, t report.Target) []byte {
	host := t.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if t.Port != defaultPort(t.Scheme) {
		host += ":" + strconv.Itoa(t.Port)
	}
	ua := c.UserAgent
	if ua == "" {
		ua = "edgebench"
	}
	hasBody := len(c.Body) > 0 || c.Method == "POST" || c.Method == "PUT" || c.Method == "PATCH"
	length := strconv.Itoa(len(c.Body))
	given := func(name string) bool {
		return slices.ContainsFunc(c.Headers, func(h report.Header) bool { return strings.EqualFold(h.Name, name) })
	}
	proto := " HTTP/1.1\r\n"
	headers := c.Headers
	var first, last []report.Header // the tool's own headers, before and after Config's
	switch c.Dialect {
	case DialectAB:
		proto = " HTTP/1.0\r\n"
		if c.KeepAlive {
			first = append(first, report.Header{Name: "Connection", Value: "Keep-Alive"})
		}
		if hasBody && !given("Content-Length") {
			// Just before the Content-type, as ab writes them.
			i := max(slices.IndexFunc(headers, func(h report.Header) bool { return strings.EqualFold(h.Name, "Content-Type") }), 0)
			headers = slices.Insert(slices.Clone(headers), i, report.Header{Name: "Content-length", Value: length})
		}
		last = []report.Header{{Name: "Host", Value: host}, {Name: "User-Agent", Value: ua}, {Name: "Accept", Value: "*/*"}}
	case DialectWrk:
		first = []report.Header{{Name: "Host", Value: host}}
		if len(c.Body) > 0 {
			first = append(first, report.Header{Name: "Content-Length", Value: length})
		}
	default:
		first = []report.Header{{Name: "Host", Value: host}}
		if !c.KeepAlive {
			first = append(first, report.Header{Name: "Connection", Value: "close"})
		}
		if hasBody {
			first = append(first, report.Header{Name: "Content-Length", Value: length})
		}
	}
	var b strings.Builder
	b.WriteString(c.Method + " " + t.Path + proto)
	own := func(hs []report.Header) {
		for _, d := range hs {
			if !given(d.Name) {
				b.WriteString(d.Name + ": " + d.Value + "\r\n")
			}
		}
	}
	own(first)
	for _, h := range headers {
		b.WriteString(h.Name + ": " + h.Value + "\r\n")
	}
	own(last)
	b.WriteString("\r\n")
	b.Write(c.Body)
	return []byte(b.String())
}
