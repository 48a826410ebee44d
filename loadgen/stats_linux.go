//go:build linux

package loadgen

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
)

// This file is what the engine counts: each worker's tallies, histograms
// and timeline, booked as its requests end (record, recordFailure), and
// merged into one report.LoadResult when the run is over (merge). The I/O
// state machine that drives the requests is in engine_linux.go and the
// files it names.

// stats is one worker's statistics. Only the worker's loop writes them;
// Run reads them after the loop has ended.
type stats struct {
	win, drained     tally // the measured window; the requests in flight when it closed
	warmup           int64 // requests the warm-up started
	lastEnd          int64 // when the window's last request ended, ns since base
	lat, connH, wait *report.Histogram
	proc, hs         *report.Histogram
	server           string
	tlsInfo          *report.TLSInfo // of the first handshake
	maxStreams       int64           // the HTTP/2 server's SETTINGS_MAX_CONCURRENT_STREAMS
	goAways          int64           // HTTP/2 connections the server ended with GOAWAY
	rates            [][]uint32      // each thread's completions in the window per report.RateSlot (wrk's Req/Sec)
	timings          []report.Timing // with Config.Timings

	// the current second of the timeline
	sec          int
	secCompleted int64
	secErrors    int64
	secHist      *report.Histogram
	timeline     []secRecord
}

func newStats(threads int) stats {
	return stats{
		rates:   make([][]uint32, threads),
		lat:     report.NewLatencyHistogram(),
		connH:   report.NewLatencyHistogram(),
		wait:    report.NewLatencyHistogram(),
		proc:    report.NewLatencyHistogram(),
		hs:      report.NewLatencyHistogram(),
		secHist: report.NewHistogram(report.MaxLatencyUS, 2),
	}
}

// tally counts the requests of one part of a run.
type tally struct {
	requests, completed, ok, cut int64
	errs                         report.Errors
	status                       [1000]int64
	bytes, body, connects, sent  int64
	keepAlive                    int64     // responses that left the connection open
	handshakes, resumed          int64     // TLS handshakes of the connections opened, and those that resumed a session
	retried                      int64     // HTTP/2 requests a GOAWAY left unprocessed, sent again
	head                         int64     // HTTP/2 header frame bytes read
	resets                       [16]int64 // HTTP/2 streams reset, by error code (15: any other)
}

// progress is read by Run's reporter while the loop runs.
type progress struct {
	completed, errors, connected, connFails atomic.Int64
	// ready counts the connections whose set-up went through (TLS
	// handshake, HTTP/2's SETTINGS) and setupFails those whose did not.
	ready, setupFails atomic.Int64
	connErr           atomic.Uint32 // errno of the last failed connect
	_                 [12]byte      // keep workers' counters off one cache line
}

type secRecord struct {
	t                 int
	completed, errors int64
	hist              []byte // compact histogram of the second
}

// Outcomes of a request that ended without a response.
const (
	outConnect = iota
	outRead
	outWrite
	outTimeout
	outTLS   // the connection's set-up (TLS, HTTP/2's preface) failed
	outReset // the HTTP/2 stream was reset by the server
	outCut   // still running at the end of the drain
	outLimit // the server went past a limit of the client (ErrLimit)
)

// failOutcome is the outcome of a request whose connection failed with
// err: outLimit when the server went past a limit, else outcome.
func failOutcome(err error, outcome int) int {
	if errors.Is(err, ErrLimit) {
		return outLimit
	}
	return outcome
}

// part books the request rq that ended at now in the part of the run it
// belongs to and returns that part's tally, with whether it is the
// window's; nil for a request of the warm-up, which is in no figure. Its
// bytes and body bytes are booked whether it completed or not, those it
// read before a timed window closed in the window.
func (w *worker) part(rq *request, now int64) (t *tally, window bool) {
	if !rq.counted {
		w.warmup++
		return nil, false
	}
	t, window = &w.win, true
	bytes, body := rq.rbytes, rq.body
	if d := w.sh.deadline; d > 0 && now >= d {
		t, window = &w.drained, false
		// What it read while the window was open is the window's, as
		// wrk counts every byte its run read.
		w.win.bytes += rq.winBytes
		w.win.body += rq.winBody
		bytes -= rq.winBytes
		body -= rq.winBody
	} else {
		w.lastEnd = now
	}
	t.requests++
	t.bytes += bytes
	t.body += body
	t.head += rq.head
	t.sent += int64(rq.sent)
	t.connects += int64(rq.opened)
	if rq.handshook {
		t.handshakes++
		if rq.resumed {
			t.resumed++
		}
	}
	if rq.retried2 {
		t.retried++
	}
	return t, window
}

// record books a complete response of the connection's thread (its index
// among the loop's threads): rq's status, body and keepAlive say what it
// was.
func (w *worker) record(rq *request, thread int32, now int64) {
	t, window := w.part(rq, now)
	if t == nil {
		return
	}
	t.completed++
	if rq.keepAlive {
		t.keepAlive++
	}
	if rq.status >= 0 && rq.status < len(t.status) {
		t.status[rq.status]++
	}
	late := w.sh.whole && now-rq.tBegin-rq.connDur >= w.sh.timeout
	failed := true
	switch {
	case late:
		t.errs.Timeout++
	case rq.status < 200 || rq.status >= 400:
		t.errs.Status++
	case rq.status < 300 && !w.lengthOK(rq.body):
		t.errs.Length++
	default:
		failed = false
		t.ok++
	}
	w.prog.completed.Add(1)
	if failed {
		w.prog.errors.Add(1)
	}
	if !window {
		return
	}
	w.second(now)
	w.secCompleted++
	if failed {
		w.secErrors++
	}
	slot := int((now - w.sh.measureStart) / int64(report.RateSlot))
	rates := &w.rates[thread]
	for len(*rates) <= slot {
		*rates = append(*rates, 0)
	}
	(*rates)[slot]++
	if late {
		return // as wrk: out of the latency figures
	}
	lat := (now - rq.tStart) / 1000
	w.lat.Record(lat)
	w.connH.Record(rq.connDur / 1000)
	if rq.handshook {
		w.hs.Record(rq.hsDur / 1000)
	}
	w.wait.Record((rq.tFirst - rq.tWritten) / 1000)
	w.proc.Record((now - rq.tStart - rq.connDur) / 1000)
	w.secHist.Record(lat)
	if w.sh.cfg.Timings {
		w.timings = append(w.timings, report.Timing{
			Start: w.sh.base.Add(time.Duration(rq.tStart)).UnixMicro(), Connect: rq.connDur / 1000,
			Wait: (rq.tFirst - rq.tWritten) / 1000, Total: lat,
		})
	}
}

// lengthOK notes the length of the first 2xx body (ab's document length)
// and, with the length check, reports whether body has that length.
func (w *worker) lengthOK(body int64) bool {
	doc := w.sh.docLen.Load()
	if doc < 0 && !w.sh.docLen.CompareAndSwap(-1, body) {
		doc = w.sh.docLen.Load()
	}
	return doc < 0 || !w.sh.cfg.LengthCheck || body == doc
}

// recordFailure books a request that ended without a response, with the
// given outcome (and, for a reset, the stream's error code).
func (w *worker) recordFailure(rq *request, outcome int, code uint32, now int64) {
	t, window := w.part(rq, now)
	if t == nil {
		return
	}
	switch outcome {
	case outTLS:
		t.errs.TLS++
	case outReset:
		t.errs.Reset++
		t.resets[min(code, uint32(len(t.resets)-1))]++
	case outConnect:
		t.errs.Connect++
	case outRead:
		t.errs.Read++
	case outWrite:
		t.errs.Write++
	case outTimeout:
		t.errs.Timeout++
	case outCut:
		t.cut++
	case outLimit:
		t.errs.Limit++
	}
	w.prog.errors.Add(1)
	if window {
		w.second(now)
		w.secErrors++
	}
}

// second moves the timeline to the second that holds now.
func (w *worker) second(now int64) {
	s := int((now - w.sh.measureStart) / int64(time.Second))
	if s == w.sec {
		return
	}
	w.flushSecond()
	w.sec = s
}

func (w *worker) flushSecond() {
	if w.secCompleted == 0 && w.secErrors == 0 {
		return
	}
	w.timeline = append(w.timeline, secRecord{
		t: w.sec, completed: w.secCompleted, errors: w.secErrors,
		hist: w.secHist.AppendCompact(nil),
	})
	w.secCompleted, w.secErrors = 0, 0
	w.secHist.Reset()
}

// protocolOf is what the requests of a load test speak.
func protocolOf(cfg Config, t report.Target) string {
	switch {
	case cfg.HTTP2 && t.Scheme == "https":
		return "h2"
	case cfg.HTTP2:
		return "h2c"
	case cfg.Dialect == DialectAB:
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// merge adds up the workers' statistics into one LoadResult.
func merge(workers []*worker, cfg Config, t report.Target) *report.LoadResult {
	r := &report.LoadResult{
		Target: t, Method: cfg.Method, Connections: cfg.Connections, Protocol: protocolOf(cfg, t),
		KeepAlive: cfg.KeepAlive || cfg.HTTP2, Rate: cfg.Rate, Timeout: cfg.Timeout, WholeRequestTimeout: cfg.WholeRequestTimeout,
		Warmup: cfg.Warmup, LengthCheck: cfg.LengthCheck, RequestBody: int64(len(cfg.Body)),
		StatusCodes: map[int]int64{}, Drained: report.Drained{StatusCodes: map[int]int64{}},
		Latency: report.NewLatencyHistogram(), Connect: report.NewLatencyHistogram(),
		Waiting: report.NewLatencyHistogram(), Processing: report.NewLatencyHistogram(),
	}
	type agg struct {
		completed, errors int64
		hist              *report.Histogram
	}
	seconds := map[int]*agg{}
	last := -1
	for _, w := range workers {
		win, d := &w.win, &w.drained
		r.Completed += win.completed
		r.OK += win.ok
		r.Errors.Add(win.errs)
		r.Bytes += win.bytes
		r.BodyBytes += win.body
		r.Sent += win.sent
		r.Connects += win.connects
		r.KeepAliveResponses += win.keepAlive
		r.ThreadRates = append(r.ThreadRates, w.rates...)
		if w.tlsInfo != nil {
			if r.TLS == nil {
				i := *w.tlsInfo
				r.TLS, r.Handshake = &i, report.NewLatencyHistogram()
			}
			r.TLS.Handshakes += win.handshakes
			r.TLS.Resumed += win.resumed
			_ = r.Handshake.Merge(w.hs)
		}
		if cfg.HTTP2 {
			if r.H2 == nil {
				r.H2 = &report.H2Info{Streams: cfg.Streams}
			}
			r.H2.MaxStreams = max(r.H2.MaxStreams, w.maxStreams)
			r.H2.GoAways += w.goAways
			r.H2.Retried += win.retried
			r.H2.HeaderBytes += win.head
			for code, n := range win.resets {
				if n > 0 {
					if r.H2.Resets == nil {
						r.H2.Resets = map[string]int64{}
					}
					name := H2ErrorName(uint32(code))
					if code == len(win.resets)-1 {
						name = "other"
					}
					r.H2.Resets[name] += n
				}
			}
		}
		r.Timings = append(r.Timings, w.timings...)
		r.Drained.Requests += d.requests
		r.Drained.Completed += d.completed
		r.Drained.OK += d.ok
		r.Drained.Errors.Add(d.errs)
		r.Drained.Cut += d.cut
		r.Drained.Bytes += d.bytes
		r.Drained.BodyBytes += d.body
		r.Drained.Connects += d.connects
		r.WarmupRequests += w.warmup
		if r.Server == "" {
			r.Server = w.server
		}
		for code := range win.status {
			if n := win.status[code]; n > 0 {
				r.StatusCodes[code] += n
			}
			if n := d.status[code]; n > 0 {
				r.Drained.StatusCodes[code] += n
			}
		}
		// Histograms of one shape merge without error.
		_ = r.Latency.Merge(w.lat)
		_ = r.Connect.Merge(w.connH)
		_ = r.Waiting.Merge(w.wait)
		_ = r.Processing.Merge(w.proc)
		for _, s := range w.timeline {
			a := seconds[s.t]
			if a == nil {
				a = &agg{hist: report.NewHistogram(report.MaxLatencyUS, 2)}
				seconds[s.t] = a
			}
			a.completed += s.completed
			a.errors += s.errors
			if h, err := report.DecodeHistogram(s.hist); err == nil {
				_ = a.hist.Merge(h)
			}
			last = max(last, s.t)
		}
	}
	r.Threads, r.Loops = len(r.ThreadRates), len(workers)
	for t := 0; t <= last; t++ {
		s := report.Second{T: t}
		if a := seconds[t]; a != nil {
			s.Completed, s.Errors = a.completed, a.errors
			s.P50, s.P99 = a.hist.Quantile(0.50), a.hist.Quantile(0.99)
		}
		r.Timeline = append(r.Timeline, s)
	}
	return r
}
