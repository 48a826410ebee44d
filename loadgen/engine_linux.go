//go:build linux

package loadgen

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The engine is wrk's design: each worker is one event loop (epoll) over its
// share of the connections, with the request serialised once, one read
// buffer per loop and no goroutine per connection. A connection is
// registered once, edge-triggered for input and output, so a keep-alive
// request costs one write and one read: no epoll_ctl, no read that only
// learns EAGAIN.

// This file is the loop and what it holds (conn, request, worker, shared);
// the loop opens its connections in dial_linux.go, keeps its time (the
// window's end, waits, timeouts) in timers_linux.go, and drives each
// request by its connection's state in request_linux.go. Over TLS a
// connection's socket is read and written through crypto/tls
// (tls_linux.go), its handshake a coroutine resumed at the socket's edges;
// an HTTP/2 connection carries many requests at once, its streams driven
// by h2_linux.go.

// Connection states.
const (
	stIdle       = iota // no request: about to start one
	stWaiting           // open loop or back-off: waits for c.wakeAt
	stConnecting        // connect in progress, request pending
	stHandshake         // TLS handshake in progress, request pending
	stWriting           // request partly written
	stReading           // request written, response pending
	stClosing           // response recorded; waits for the server's FIN before closing
	stH2                // an HTTP/2 connection: its streams come and go
	stDone              // no more requests on this connection
)

// epollFlags registers a connection once for both directions, edge-triggered.
const epollFlags = syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | syscall.EPOLLET&0xffffffff

const (
	tick        = 10 * time.Millisecond // timeout and deadline granularity
	readBufSize = 64 << 10
	maxEvents   = 256
)

type conn struct {
	fd      int
	idx     int32 // index in the worker's conns, carried in epoll events
	thread  int32 // its thread, among its loop's (wrk's Req/Sec is per thread)
	slot    int32 // its place in the open-loop schedule (firstSend's idx)
	state   uint8
	retried bool // a stale keep-alive connection was already retried
	gotByte bool // a byte of the response has arrived
	peerFIN bool // the server's FIN has arrived (EPOLLRDHUP)
	up      bool // the TCP connection is established
	tlsEOF  bool // crypto/tls said the stream ended: read the socket to its FIN
	again   bool // in worker.again: its input was not drained
	ramp    bool // opened by the ramp and not answered yet (rampMax)
	served  int  // responses on this fd

	againEv  uint32 // the event whose input was not drained
	lastIO   int64  // when it last made progress (began, connected, wrote, read): the idle timeout counts from here
	tConnect int64  // when connect began; 0 on a reused connection
	tUp      int64  // when the TCP connection was established
	wakeAt   int64  // stWaiting (and HTTP/2's open loop): when to start
	nextSend int64  // open loop: scheduled time of the next request

	request // the HTTP/1.x request in flight
	p       respParser

	// Over TLS and HTTP/2: the socket as crypto/tls and the HTTP/2
	// client see it, the TLS layer, the HTTP/2 streams.
	fc fdConn
	tl tlsConn
	h2 *h2conn
}

// request is one request's state: its times, its bytes and what came back.
type request struct {
	counted   bool  // it started in the measured window
	opened    uint8 // connections it opened (a stale keep-alive retry opens a second)
	handshook bool  // it made a TLS handshake (of the connection it opened)
	resumed   bool  // that handshake resumed a session
	retried2  bool  // an HTTP/2 request a GOAWAY left unprocessed, sent again
	keepAlive bool  // its response left the connection open
	status    int
	sent      int   // request bytes written
	rbytes    int64 // bytes read for it
	head      int64 // HTTP/2: of which header frames
	body      int64 // body bytes read for it
	// What it had read when a timed window closed (closeWindow), for
	// a request in flight then: the window's part of rbytes and body.
	winBytes, winBody int64

	tStart   int64 // latency start: scheduled time (open loop) or send time, ns since base
	tBegin   int64 // when the request was really started
	connDur  int64 // setting its connection up: TCP connect and TLS handshake; 0 on a reused connection
	hsDur    int64 // the TLS handshake's part of connDur
	tWritten int64
	tFirst   int64
}

// worker is one event loop and its statistics.
type worker struct {
	sh     *shared
	sa     syscall.Sockaddr // its own: Connect writes into it
	epfd   int
	conns  []conn
	events []syscall.EpollEvent
	buf    []byte
	// again are the connections whose input was not drained after
	// maxReads reads; spare is the other half of the double buffer.
	again, spare []*conn
	// held are the connections whose first request ended while the
	// run was still opening others (rampUp): their next waits for the
	// last to be opened, whichever loop opens it.
	held []*conn

	active   int // connections not stDone
	waiting  int // connections in stWaiting
	stopping bool
	started  int            // connections started: the ramp starts the others
	noPwait2 bool           // the kernel has no epoll_pwait2: waits are whole milliseconds
	ts       kernelTimespec // epoll_pwait2's timeout, here so as not to be allocated per wait

	stats // what the loop measured (stats_linux.go)
	prog  progress
}

// shared is what all workers of a run read.
type shared struct {
	cfg          Config
	req          []byte
	sa           syscall.Sockaddr
	family       int
	base         time.Time
	measureStart int64 // ns since base
	deadline     int64 // end of a timed window, ns since base; 0: none
	drainEnd     int64 // deadline + timeout: requests still in flight then are cut
	timeout      int64
	whole        bool  // wrk's whole-request timeout
	interval     int64 // open loop: ns between requests of one connection
	budget       int64 // measured requests allowed; 0: no limit
	issued       atomic.Int64
	ramping      atomic.Int64 // connections opened by the ramp and not answered yet, over the workers
	unstarted    atomic.Int64 // connections the ramp has not started yet, over the workers
	docLen       atomic.Int64
	abort        atomic.Bool
	headOnly     bool
	bigRequest   bool
	// pendMax bounds what a connection keeps for the socket to take
	// (fdConn.pend): the request, HTTP/2's requests of every stream,
	// and room for the frames it answers the server's with.
	pendMax int

	tls        *tls.Config // nil for http://
	serverName string      // sent in SNI
	addr       net.Addr    // the server's, for crypto/tls's messages
	h2         bool
	h2req      h2Request
	setupMu    sync.Mutex
	setupErr   error // the first lasting set-up error, else the first one
	setupFatal bool  // setupErr will not go away: a refused certificate, no TLS, no h2
}

// inWindow reports whether a request due at start (ns since base) is the
// measured window's: the warm-up's are in no figure.
func (s *shared) inWindow(start int64) bool { return start >= s.measureStart }

// noteSetup keeps a connection set-up error for the run's error, should no
// connection ever be set up.
func (s *shared) noteSetup(err error, lasting bool) {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	if s.setupErr == nil || lasting && !s.setupFatal {
		s.setupErr, s.setupFatal = err, lasting
	}
}

// setup returns the set-up error noted, and whether it lasts.
func (s *shared) setup() (error, bool) {
	s.setupMu.Lock()
	defer s.setupMu.Unlock()
	return s.setupErr, s.setupFatal
}

func (s *shared) now() int64 { return int64(time.Since(s.base)) }

// newWorker makes the event loop of the connections placed by layout,
// for threads threads.
func newWorker(sh *shared, places []place, threads int) (*worker, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	nconns := len(places)
	w := &worker{
		sh:     sh,
		sa:     copySockaddr(sh.sa),
		epfd:   epfd,
		conns:  make([]conn, nconns),
		events: make([]syscall.EpollEvent, min(maxEvents, nconns+1)),
		buf:    make([]byte, readBufSize),
		again:  make([]*conn, 0, nconns),
		spare:  make([]*conn, 0, nconns),
		held:   make([]*conn, 0, nconns),
		stats:  newStats(threads),
		active: nconns,
	}
	for i := range w.conns {
		c := &w.conns[i]
		c.fd, c.fc.fd, c.idx = -1, -1, int32(i)
		c.thread, c.slot = int32(places[i].thread), int32(places[i].slot)
		c.fc.max = sh.pendMax
		if sh.h2 {
			c.h2 = &h2conn{reqs: make([]request, sh.cfg.Streams)}
		}
	}
	return w, nil
}

// run drives the loop until every connection is done or the run aborts.
func (w *worker) run() {
	sh := w.sh
	for i := range w.conns {
		if c := &w.conns[i]; sh.interval > 0 {
			// Request k of the run is due at k/rate; connection j sends
			// requests j, j+n, j+2n, ...
			c.nextSend = firstSend(int(c.slot), sh.cfg.Connections, sh.interval)
		}
	}
	w.rampUp()
	now := sh.now()
	lastTick := now
	for w.active > 0 && !sh.abort.Load() {
		wait := int64(tick)
		if w.waiting > 0 {
			wait = min(wait, max(w.nextWake()-sh.now(), 0))
		}
		if len(w.held) > 0 {
			// Another loop still opens connections: look again soon.
			wait = min(wait, int64(time.Millisecond))
		}
		if len(w.again) > 0 || w.started < len(w.conns) && sh.ramping.Load() < rampMax {
			wait = 0
		}
		n, err := w.epollWait(wait)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			break
		}
		for i := range n {
			ev := &w.events[i]
			c := &w.conns[ev.Fd]
			now := sh.now()
			w.closeWindow(now)
			w.onEvent(c, ev.Events, now)
		}
		if len(w.again) > 0 {
			now := sh.now()
			w.closeWindow(now)
			w.readOn(now)
		}
		if w.started < len(w.conns) || len(w.held) > 0 {
			w.rampUp()
		}
		now = sh.now()
		w.closeWindow(now)
		if w.waiting > 0 {
			w.wake(now)
		}
		if now-lastTick >= int64(tick) {
			lastTick = now
			w.expire(now)
		}
	}
	w.flushSecond()
	for i := range w.conns {
		w.closeFd(&w.conns[i])
	}
	syscall.Close(w.epfd)
}

// epollWait waits at most wait ns for the loop's events. A wait shorter
// than a millisecond, an open loop's next send, is epoll_pwait2's (Linux
// 5.11): epoll_wait counts in milliseconds, and the loop would spin
// through the last one before each send, a core per loop, taken from a
// server on the same cores, and preempted for it, its sends late. A
// kernel without epoll_pwait2 gets that spin.
func (w *worker) epollWait(wait int64) (int, error) {
	if wait > 0 && wait%int64(time.Millisecond) != 0 && !w.noPwait2 {
		w.ts = kernelTimespec{wait / int64(time.Second), wait % int64(time.Second)}
		n, e := epollPwait2(w.epfd, w.events, &w.ts)
		switch e {
		case 0:
			return n, nil
		case syscall.ENOSYS, syscall.EPERM:
			w.noPwait2 = true
		default:
			return 0, e
		}
	}
	return syscall.EpollWait(w.epfd, w.events, int(wait/int64(time.Millisecond)))
}

func copySockaddr(sa syscall.Sockaddr) syscall.Sockaddr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		c := *a
		return &c
	case *syscall.SockaddrInet6:
		c := *a
		return &c
	}
	return sa
}
