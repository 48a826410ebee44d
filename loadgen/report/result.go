package report

import (
	"sort"
	"time"
)

// LoadResult is what one load test measured. Latency figures are microseconds.
//
// Every figure but Drained and WarmupRequests is over the measured window:
// the requests that started after the warm-up and ended by the end of the
// window (Duration, or the last of Requests). A request still in flight
// when a timed window closes is waited for and reported in Drained, apart:
// it is in no rate, latency, byte or error figure of the window.
type LoadResult struct {
	Target      Target
	Method      string
	Connections int
	Threads     int // wrk's threads, each with its share of the connections
	// Loops are the event loops the threads ran on: at most one per CPU
	// the run could use (GOMAXPROCS), as more would wait for each other;
	// 0 when not known (a result rebuilt from the wire).
	Loops               int
	KeepAlive           bool
	Rate                float64 // requested open-loop rate; 0 for closed loop
	Timeout             time.Duration
	WholeRequestTimeout bool // Timeout has wrk's meaning (see Config)
	Warmup              time.Duration
	LengthCheck         bool // Errors.Length was counted

	Start    time.Time     // start of the measured window
	Duration time.Duration // length of the measured window, never longer than Config.Duration

	Completed   int64 // responses received in full (any status)
	OK          int64 // 2xx/3xx responses (of the expected length with LengthCheck)
	Errors      Errors
	StatusCodes map[int]int64
	// Bytes are the bytes read, headers included, and BodyBytes those of
	// the bodies, by the window's requests while it was open, whether
	// their response completed or not (as wrk and ab count them): a
	// download still flowing when the window closed adds what it had
	// read by then, and the rest to Drained.
	Bytes       int64
	BodyBytes   int64
	Sent        int64 // request bytes written, headers and body included
	RequestBody int64 // the size of each request's body (ab's -p and -u)
	Connects    int64 // connections opened
	// KeepAliveResponses counts the responses after which the server
	// keeps the connection open (an HTTP/1.1 one that does not say
	// "Connection: close", an HTTP/1.0 one that says keep-alive): ab's
	// "Keep-Alive requests", since ab's HTTP/1.0 request is kept alive
	// only when its response says so.
	KeepAliveResponses int64
	DocLength          int64 // body length of the first 2xx response, -1 if none
	Server             string
	Interrupted        bool // the run was cancelled before its end

	Latency *Histogram // request start to last byte
	// Connect is the time to set a new connection up: TCP connect, and
	// the TLS handshake over https (as ab and h2load count it); 0 for a
	// request on a reused connection.
	Connect    *Histogram
	Waiting    *Histogram // request written to first byte
	Processing *Histogram // latency minus connect

	// Protocol is what the requests spoke: HTTP/1.1, HTTP/1.0 (ab's), h2
	// (HTTP/2 over TLS) or h2c (in cleartext).
	Protocol string
	// TLS is what the TLS handshakes negotiated and how many resumed a
	// session; nil for http:// targets.
	TLS *TLSInfo
	// Handshake is the TLS handshake's part of Connect, for each new
	// connection; nil for http:// targets.
	Handshake *Histogram
	// H2 is what HTTP/2 connections saw; nil for HTTP/1.x.
	H2 *H2Info

	Timeline []Second
	// ThreadRates counts, for each thread (Threads of them: wrk's threads,
	// which share the event loops, at most one per CPU), the responses
	// completed in each RateSlot of the window, from which wrk's Req/Sec
	// is sampled.
	ThreadRates [][]uint32
	// Timings are the timings of every request of the window's latency
	// figures, in the order they ended, with Config.Timings.
	Timings []Timing

	// Drained is what became of the requests in flight when the window
	// closed.
	Drained Drained
	// WarmupRequests counts the requests the warm-up started (and that
	// ended), which are in no other figure: with Completed, the Drained
	// requests and the failures, they make up the server's access log.
	WarmupRequests int64
}

// Drained counts the requests that were in flight when a timed window
// closed. They are waited for, so that the totals match the server's
// access log, but at most Timeout after the window's end: those still
// running then are cut (a body still flowing, or any request with wrk's
// timeout).
type Drained struct {
	Requests    int64         `json:"requests"`
	Completed   int64         `json:"completed"` // responses received in full
	OK          int64         `json:"ok"`
	Errors      Errors        `json:"errors"`
	Cut         int64         `json:"cut"` // closed at the end of the drain
	StatusCodes map[int]int64 `json:"status_codes"`
	Bytes       int64         `json:"bytes"`
	BodyBytes   int64         `json:"body_bytes"`
	Connects    int64         `json:"connects"`
}

// RateSlot is the period of ThreadRates: wrk samples each thread's
// request rate every 100 ms.
const RateSlot = 100 * time.Millisecond

// Timing is one request's times in microseconds, as ab records them for
// its -e and -g files.
type Timing struct {
	Start   int64 // when it began, Unix microseconds
	Connect int64 // connecting (0 on a reused connection)
	Wait    int64 // from the request written to the first byte of the response
	Total   int64 // from its start to the last byte of the response
}

// Errors counts the requests that failed, by class.
type Errors struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Timeout int64 `json:"timeout"` // the server sent nothing for Timeout; with wrk's timeout, late responses (also in Completed)
	Status  int64 `json:"status"`  // complete responses with a status other than 2xx/3xx
	Length  int64 `json:"length"`  // 2xx bodies whose length differs from the first one (with LengthCheck)
	// TLS counts the requests whose connection's set-up failed after TCP
	// connected: a TLS handshake (a refused certificate, an alert, a
	// server that speaks no TLS), or an HTTP/2 server that is none.
	TLS int64 `json:"tls"`
	// Reset counts HTTP/2 streams the server reset (RST_STREAM), whose
	// codes H2Info.Resets gives.
	Reset int64 `json:"reset"`
	// Limit counts the requests of connections the client closed because
	// the server pushed it past a bound on what it buffers: control
	// frames (PING, SETTINGS) flooded faster than their acknowledgements
	// could be written, output the server did not read, a header block
	// over 256 KiB.
	Limit int64 `json:"limit,omitempty"`
}

// Total is the number of failed requests.
func (e Errors) Total() int64 {
	return e.Connect + e.Read + e.Write + e.Timeout + e.Status + e.Length + e.TLS + e.Reset + e.Limit
}

// Socket is the number of failures wrk calls socket errors (it counts a
// failed TLS handshake as a connect error).
func (e Errors) Socket() int64 {
	return e.Connect + e.Read + e.Write + e.Timeout + e.TLS + e.Reset + e.Limit
}

// Add adds o's counts to e.
func (e *Errors) Add(o Errors) {
	e.Connect += o.Connect
	e.Read += o.Read
	e.Write += o.Write
	e.Timeout += o.Timeout
	e.Status += o.Status
	e.Length += o.Length
	e.TLS += o.TLS
	e.Reset += o.Reset
	e.Limit += o.Limit
}

// Second is one second of the timeline, counted from the start of the
// measured window by completion time.
type Second struct {
	T         int   `json:"t"`
	Completed int64 `json:"completed"`
	Errors    int64 `json:"errors"`
	P50       int64 `json:"p50_us"`
	P99       int64 `json:"p99_us"`
}

// RPS is completed requests per second over the measured window.
func (r *LoadResult) RPS() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Completed) / r.Duration.Seconds()
}

// NoLatency says why r's window has no latency figure, "" when it has
// one: no response completed in it (a download still flowing when it
// closed, a server that never answered), or every response took wrk's
// timeout or longer, which leaves them out of the latency. A report
// prints no latency then, rather than figures of 0 that no request backs.
func (r *LoadResult) NoLatency() string {
	switch {
	case r.Latency != nil && r.Latency.Count() > 0:
		return ""
	case r.Completed == 0:
		return "no response completed in the measured window"
	case r.Errors.Timeout >= r.Completed:
		return "every response took the timeout or longer, which leaves it out of the latency"
	}
	return "no latency was recorded"
}

// AllOK counts the successful responses, the drained ones included: a run
// without any failed, however few its window holds.
func (r *LoadResult) AllOK() int64 { return r.OK + r.Drained.OK }

// Failed is what ab calls failed requests.
func (r *LoadResult) Failed() int64 { return r.Errors.Total() }

// Percentiles are the quantiles reports print, as in ab's table plus
// the tail.
var Percentiles = []float64{50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 100}

// sortedCodes returns the status codes of m in increasing order.
func sortedCodes(m map[int]int64) []int {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	return codes
}
