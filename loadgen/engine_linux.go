//go:build linux

package loadgen

import (
	"crypto/tls"
	"errors"
	"io"
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

// Over TLS a connection's socket is read and written through crypto/tls
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
	tick           = 10 * time.Millisecond // timeout and deadline granularity
	connectBackoff = 10 * time.Millisecond // after a failed connect
	readBufSize    = 64 << 10
	maxEvents      = 256
	// maxReads bounds the reads of one connection in a row (4 MiB): a
	// server that sends as fast as it is read would otherwise keep the
	// loop on its connection for ever, deaf to the run's end, to the
	// timeouts and to the other connections. The rest is read after the
	// loop's next round of events (readLater).
	maxReads = 64
	// rampMax bounds the connections of a run opened and not yet
	// answered (a first byte from the server) while the run opens its
	// connections: the server's listen backlog holds the connections it
	// has not accepted, and a SYN that finds it full is dropped and sent
	// again 1 s later, then 3 s (issue 28: ab -c5000 -k against nginx on
	// a busy box, edgebench's slowest connects 3.3 s, ab's, whose
	// connects are slower to issue, 0.3 s). 128 is the smallest backlog
	// in common use (Linux's somaxconn before 5.4; nginx's is 511).
	rampMax = 128
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

// rampUp starts the loop's connections not started yet while fewer than
// rampMax of the run's are waiting for the server's first answer (see
// rampMax): in closed loop a connection is opened when the server has
// answered one before it, not all at once. As ab, which opens them all
// before it reads an answer, no connection sends a second request before
// the run's last one is opened (held), whichever loop opens it: the load
// is the test's concurrency, not the first connections'. In open loop the schedule
// paces the connects. The clock is read for each, so that each connect
// time is its own.
func (w *worker) rampUp() {
	sh := w.sh
	for w.started < len(w.conns) && (sh.interval > 0 || sh.ramping.Load() < rampMax) {
		c := &w.conns[w.started]
		w.started++
		sh.unstarted.Add(-1)
		if sh.interval == 0 {
			c.ramp = true
			sh.ramping.Add(1)
		}
		w.next(c, sh.now())
		if c.fd < 0 {
			// Waiting for its schedule or a retry, done, or failed at
			// once: it waits for no answer.
			w.answered(c)
		}
	}
	if len(w.held) > 0 && sh.unstarted.Load() == 0 {
		for _, c := range w.held {
			w.next(c, sh.now())
		}
		w.held = w.held[:0]
	}
}

// answered frees c's place in the ramp: the server answered it (its
// first byte came), or its connection closed.
func (w *worker) answered(c *conn) {
	if c.ramp {
		c.ramp = false
		w.sh.ramping.Add(-1)
	}
}

// closeWindow stops the loop's requests at the deadline of a timed
// window: before anything happens at or after it, it notes what each
// request in flight has read so far, the window's part of its bytes
// (part), as wrk counts every byte read in its run, a response complete
// or not.
func (w *worker) closeWindow(now int64) {
	if w.stopping || w.sh.deadline == 0 || now < w.sh.deadline {
		return
	}
	w.stopping = true
	for i := range w.conns {
		c := &w.conns[i]
		if c.h2 == nil {
			c.winBytes, c.winBody = c.rbytes, c.p.body
			continue
		}
		for j := range c.h2.cl.streams {
			if s := &c.h2.cl.streams[j]; s.sid != 0 {
				rq := &c.h2.reqs[j]
				rq.winBytes, rq.winBody = s.bytes, s.body
			}
		}
	}
}

// readLater puts c, whose input was not drained after maxReads reads of
// the event ev, in the list read on after the loop's next round of
// events.
func (w *worker) readLater(c *conn, ev uint32) {
	if !c.again {
		c.again, c.againEv = true, ev
		w.again = append(w.again, c)
	}
}

// readOn reads on the connections readLater put aside.
func (w *worker) readOn(now int64) {
	batch := w.again
	w.again = w.spare[:0]
	for _, c := range batch {
		c.again = false
		if c.fd < 0 {
			continue
		}
		switch c.state {
		case stH2:
			w.h2Read(c, now)
		case stReading:
			if c.tl.tc != nil {
				w.readTLS(c, now)
			} else {
				w.read(c, c.againEv, now)
			}
		case stClosing:
			w.awaitFIN(c, now)
		}
	}
	w.spare = batch[:0]
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

func (w *worker) nextWake() int64 {
	next := int64(1<<63 - 1)
	for i := range w.conns {
		if c := &w.conns[i]; c.waits() && c.wakeAt < next {
			next = c.wakeAt
		}
	}
	return next
}

// waits reports whether c waits for c.wakeAt: to start (stWaiting), or,
// on an HTTP/2 connection, for the open loop's next request.
func (c *conn) waits() bool {
	return c.state == stWaiting || c.state == stH2 && c.h2.waiting
}

// wake starts the waiting connections that are due (or ends them when the
// run is stopping).
func (w *worker) wake(now int64) {
	for i := range w.conns {
		c := &w.conns[i]
		if !c.waits() || !w.stopping && c.wakeAt > now {
			continue
		}
		w.waiting--
		// Each one's own clock: writing the requests of those woken
		// before it took time its own did not.
		at := w.sh.now()
		if c.state == stH2 {
			c.h2.waiting = false
			w.h2Pump(c, at)
			continue
		}
		c.state = stIdle
		w.next(c, at)
	}
}

// expire fails the requests the server has left idle for the timeout,
// and cuts those still running when the drain is over.
func (w *worker) expire(now int64) {
	sh := w.sh
	cut := sh.deadline > 0 && now >= sh.drainEnd
	for i := range w.conns {
		c := &w.conns[i]
		switch c.state {
		case stClosing:
			if cut || now-c.lastIO >= sh.timeout {
				// The response was recorded: a server that does not
				// close is not a failed request.
				w.closed(c, now)
			}
		case stConnecting, stHandshake, stWriting, stReading, stH2:
			idle := now-c.lastIO >= sh.timeout
			switch {
			case c.state == stH2 && c.h2.cl.open == 0 && c.up:
				// A connection with no stream in flight is not late.
			case cut:
				w.fail(c, outCut, now, 0)
			case sh.whole && c.up || !idle:
				// wrk's timeout is counted when the response comes.
			case !c.up:
				w.connectFailed(c, syscall.ETIMEDOUT, now)
			default:
				w.fail(c, outTimeout, now, 0)
			}
		}
	}
}

// next starts the connection's next request, if the run allows one.
func (w *worker) next(c *conn, now int64) {
	sh := w.sh
	if w.stopping || sh.abort.Load() || (sh.deadline > 0 && now >= sh.deadline) {
		if sh.h2 && len(c.h2.retry) > 0 && !sh.abort.Load() {
			// Requests a GOAWAY left unprocessed are in flight: they
			// go on a new connection, drained as the others.
			w.h2Connect(c, now)
			return
		}
		w.finish(c)
		return
	}
	if sh.unstarted.Load() > 0 && !c.ramp && sh.interval == 0 && !sh.h2 {
		c.state = stIdle
		w.held = append(w.held, c)
		return
	}
	if sh.h2 {
		if sh.interval > 0 && c.nextSend > now && len(c.h2.retry) == 0 {
			w.sleep(c, c.nextSend)
			return
		}
		w.h2Connect(c, now)
		return
	}
	start := now
	if sh.interval > 0 {
		if c.nextSend > now {
			w.sleep(c, c.nextSend)
			return
		}
		start = c.nextSend
		c.nextSend += sh.interval
	}
	counted := sh.inWindow(start)
	if counted && sh.budget > 0 && sh.issued.Add(1) > sh.budget {
		w.finish(c)
		return
	}
	c.request = request{counted: counted, tStart: start, tBegin: now}
	c.retried = false
	w.begin(c, now)
}

// begin sends the current request, connecting first when needed.
func (w *worker) begin(c *conn, now int64) {
	c.sent, c.gotByte, c.peerFIN, c.lastIO = 0, false, false, now
	c.rbytes, c.tlsEOF = 0, false
	c.p.reset(w.sh.headOnly, w.server == "")
	if c.fd >= 0 {
		c.connDur, c.hsDur, c.handshook, c.resumed = 0, 0, false, false
		if c.tl.tc != nil {
			w.sendTLS(c, now)
			return
		}
		w.write(c, now)
		return
	}
	w.dial(c, now)
}

// dial opens a connection for c; its first bytes go out in dialed. A
// failure to open it fails c's request as a connect error.
func (w *worker) dial(c *conn, now int64) {
	if err := w.open(c, now); err != nil {
		errno, _ := err.(syscall.Errno)
		w.connectFailed(c, errno, now)
	}
}

func (w *worker) open(c *conn, now int64) error {
	sh := w.sh
	c.tConnect, c.up = now, false
	fd, err := syscall.Socket(sh.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if sh.bigRequest || sh.tls != nil || sh.h2 {
		// One write per request: Nagle matters only when it is split,
		// as TLS does (its Finished, then the request) and HTTP/2 (its
		// frames as they come).
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	}
	ev := syscall.EpollEvent{Events: epollFlags, Fd: c.idx}
	if err := syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		return err
	}
	c.fd, c.served = fd, 0
	c.fc.reset(fd, sh.addr)
	err = syscall.Connect(fd, w.sa)
	if err != nil && err != syscall.EINPROGRESS {
		return err
	}
	// The first bytes go out when epoll says the connection is up (see
	// dialed), as ab, wrk and h2load send them, although on loopback
	// connect has usually finished the handshake: bytes there before
	// nginx accepts the connection cost it an epoll_wait more per
	// connection (1.75 against ab's 1.16 per request without keep-alive)
	// and 6 % more CPU. The edge comes anyway: waiting costs no syscall.
	c.state = stConnecting
	return nil
}

// dialed sends the first bytes of a connection epoll says is up (ev, the
// edge that said so): the TLS handshake, HTTP/2's preface, or the
// request. What the server sent already is read at once (see send).
func (w *worker) dialed(c *conn, ev uint32, now int64) {
	switch {
	case w.sh.tls != nil:
		c.fc.edge(ev)
		w.handshake(c, now)
	case w.sh.h2:
		c.fc.edge(ev)
		c.state = stH2
		w.h2Pump(c, now)
		if c.state == stH2 && c.fc.readable {
			w.h2Read(c, now)
		}
	default:
		w.send(c, ev, now)
	}
}

// send writes the request on an edge (ev) that said the socket can take
// more. A server may answer before the request is all out (an early error,
// or a server that speaks first): the edge that brought the answer does
// not come again, so a request written to its end reads it at once.
func (w *worker) send(c *conn, ev uint32, now int64) {
	w.write(c, now)
	if c.state == stReading && ev&evIn != 0 {
		w.read(c, ev, now)
	}
}

// connected books the TCP connection of c as established.
func (w *worker) connected(c *conn, now int64) {
	c.up, c.tUp = true, w.sh.now()
	c.connDur = c.tUp - c.tConnect
	c.opened++
	w.prog.connected.Add(1)
}

// evIn are the events after which a read may return something (data, the
// end of the stream, or an error).
const evIn = syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR

func (w *worker) onEvent(c *conn, ev uint32, now int64) {
	switch c.state {
	case stConnecting:
		if ev&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			w.socketFailed(c, now)
			return
		}
		if ev&syscall.EPOLLOUT != 0 {
			w.dialed(c, ev, now)
		}
	case stHandshake:
		w.handshakeEvent(c, ev, now)
	case stWriting:
		if c.tl.tc != nil {
			c.fc.edge(ev)
			w.flushTLS(c, now)
			return
		}
		w.send(c, ev, now)
	case stReading:
		if c.tl.tc != nil {
			c.fc.edge(ev)
			w.readTLS(c, now)
			return
		}
		w.read(c, ev, now)
	case stClosing:
		if ev&evIn != 0 {
			c.fc.edge(ev)
			w.awaitFIN(c, now)
		}
	case stH2:
		w.h2Event(c, ev, now)
	case stIdle, stWaiting, stDone:
		if c.fd >= 0 && ev&evIn != 0 {
			// The server closed an idle keep-alive connection.
			w.closeFd(c)
		}
	}
}

func (w *worker) write(c *conn, now int64) {
	req := w.sh.req
	for c.sent < len(req) {
		n, err := rawWrite(c.fd, req[c.sent:])
		if err == syscall.EAGAIN {
			if c.state != stConnecting {
				c.state = stWriting
			}
			return
		}
		if err != nil {
			switch {
			case c.state == stConnecting:
				w.dialFailed(c, err, outWrite, now)
			case !w.retryStale(c, now):
				w.fail(c, outWrite, now, 0)
			}
			return
		}
		if c.state == stConnecting {
			// The first byte went out: the connection is up.
			w.connected(c, now)
			c.state = stWriting
		}
		c.sent += n
		c.lastIO = now
	}
	c.tWritten = now
	c.state = stReading
}

func (w *worker) read(c *conn, ev uint32, now int64) {
	for reads := 1; ; reads++ {
		n, err := rawRead(c.fd, w.buf)
		if err == syscall.EAGAIN {
			return
		}
		if err != nil || n == 0 {
			if err == nil && c.p.eof() {
				c.peerFIN = true
				w.complete(c, now, false)
				return
			}
			if !c.gotByte && w.retryStale(c, now) {
				return
			}
			w.fail(c, outRead, now, 0)
			return
		}
		c.peerFIN = ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP) != 0
		if w.got(c, n, now) {
			return
		}
		if n < len(w.buf) && ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP) == 0 {
			// Drained: the next edge brings the rest. When the peer's
			// FIN came with the data, no edge will follow: read on to
			// the end of the stream.
			return
		}
		if reads == maxReads {
			w.readLater(c, ev)
			return
		}
	}
}

// got feeds n bytes of w.buf to the response parser; it reports whether
// the request ended (completed or failed).
func (w *worker) got(c *conn, n int, now int64) bool {
	c.rbytes += int64(n)
	c.lastIO = now
	if !c.gotByte {
		c.gotByte, c.tFirst = true, now
		w.answered(c)
	}
	used, err := c.p.feed(w.buf[:n])
	if err != nil {
		w.fail(c, failOutcome(err, outRead), now, 0)
		return true
	}
	if c.p.done() {
		w.complete(c, now, used == n && c.p.reuse())
		return true
	}
	return false
}

// retryStale resends a request once on a new connection when a reused
// keep-alive connection turned out to be closed by the server before it
// answered anything, as HTTP clients do for idempotent requests.
func (w *worker) retryStale(c *conn, now int64) bool {
	if c.served == 0 || c.retried || c.gotByte {
		return false
	}
	w.closeFd(c)
	c.retried = true
	w.begin(c, now)
	return true
}

func (w *worker) complete(c *conn, now int64, reuse bool) {
	p := &c.p
	if p.server != nil && w.server == "" {
		w.server = string(p.server)
	}
	c.served++
	c.status, c.body, c.keepAlive = p.status, p.body, p.reuse()
	w.record(&c.request, c.thread, now)
	switch {
	case !reuse && !c.p.reuse() && !c.peerFIN && c.fd >= 0:
		// The server closes this connection: let it close first, as ab
		// does, reading its FIN before closing. The side that closes
		// first keeps the connection in TIME_WAIT for a minute: a client
		// that closed first would fill its own port range (28,000 ports,
		// under 500 connections a second) on a long run without
		// keep-alive.
		c.state = stClosing
		w.awaitFIN(c, now)
		return
	case !reuse || !w.sh.cfg.KeepAlive:
		w.closeFd(c)
	}
	c.state = stIdle
	w.next(c, now)
}

// awaitFIN reads a closing connection to its end; at the server's FIN (or
// an error) it closes it and starts the next request.
func (w *worker) awaitFIN(c *conn, now int64) {
	for reads := 1; ; reads++ {
		var err error
		switch {
		case c.tl.tc != nil && !c.tlsEOF:
			_, err = c.tl.tc.Read(w.buf)
			if err == io.EOF {
				// The server's close_notify (or FIN): its FIN may
				// still be on its way.
				c.tlsEOF = true
				continue
			}
		case c.tl.tc != nil:
			_, err = c.fc.Read(w.buf)
		default:
			var n int
			n, err = rawRead(c.fd, w.buf)
			if err == syscall.EAGAIN {
				err = errWouldBlock
			} else if err == nil && n == 0 {
				err = io.EOF
			}
		}
		if err == errWouldBlock {
			return
		}
		if err != nil {
			w.closed(c, now)
			return
		}
		// Bytes after a complete response on a closing connection are
		// not part of any response: read past them.
		if reads >= maxReads {
			w.readLater(c, evIn)
			return
		}
	}
}

// closed closes a connection in stClosing and starts the next request.
func (w *worker) closed(c *conn, now int64) {
	w.closeFd(c)
	c.state = stIdle
	w.next(c, now)
}

// dialFailed ends the request of a connection that failed (err) before
// its first bytes went out. A reset means it was up and the server dropped
// it (it accepted, then closed with SO_LINGER 0, or it was overloaded): the
// request failed with outcome, not the connect. Anything else (refused,
// unreachable, timed out) is a connect error.
func (w *worker) dialFailed(c *conn, err error, outcome int, now int64) {
	var errno syscall.Errno
	errors.As(err, &errno)
	if errno != syscall.ECONNRESET && errno != syscall.EPIPE {
		w.connectFailed(c, errno, now)
		return
	}
	w.connected(c, now)
	w.fail(c, outcome, now, 0)
}

// socketFailed ends the request of a connection whose socket reported an
// error (EPOLLERR or EPOLLHUP) before its first bytes went out: it asks
// the socket why.
func (w *worker) socketFailed(c *conn, now int64) {
	errno, _ := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	w.dialFailed(c, syscall.Errno(errno), outRead, now)
}

// connectFailed ends the current request with a connect error (errno
// says why: refused, unreachable, timed out) and retries after a backoff.
func (w *worker) connectFailed(c *conn, errno syscall.Errno, now int64) {
	if errno != 0 {
		w.prog.connErr.Store(uint32(errno))
	}
	w.prog.connFails.Add(1)
	w.fail(c, outConnect, now, connectBackoff)
}

// fail ends the current request with the given outcome (an HTTP/2
// connection's every stream), closes the connection and starts the next
// request, after backoff if given.
func (w *worker) fail(c *conn, outcome int, now int64, backoff time.Duration) {
	w.closeFd(c)
	if c.h2 != nil && w.sh.h2 {
		w.h2FailStreams(c, outcome, now)
	} else {
		c.body = c.p.body
		w.recordFailure(&c.request, outcome, 0, now)
	}
	c.state = stIdle
	if backoff > 0 {
		w.sleep(c, now+int64(backoff))
		return
	}
	w.next(c, now)
}

func (w *worker) sleep(c *conn, until int64) {
	c.state, c.wakeAt = stWaiting, until
	w.waiting++
}

func (w *worker) finish(c *conn) {
	if c.state == stDone {
		return
	}
	w.closeFd(c)
	c.state = stDone
	w.active--
}

func (w *worker) closeFd(c *conn) {
	w.answered(c)
	if c.tl.tc != nil {
		c.tl.abort() // before the socket closes: its number may be reused
	}
	if c.fd >= 0 {
		rawClose(c.fd) // also removes it from the epoll set
		c.fd = -1
	}
	c.fc.fd = -1
	if c.state == stH2 && c.h2.waiting {
		c.h2.waiting = false
		w.waiting--
	}
}
