//go:build linux

package loadgen

import (
	"errors"
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

// Connection states.
const (
	stIdle       = iota // no request: about to start one
	stWaiting           // open loop or back-off: waits for c.wakeAt
	stConnecting        // connect in progress, request pending
	stWriting           // request partly written
	stReading           // request written, response pending
	stClosing           // response recorded; waits for the server's FIN before closing
	stDone              // no more requests on this connection
)

// epollFlags registers a connection once for both directions, edge-triggered.
const epollFlags = syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | syscall.EPOLLET&0xffffffff

const (
	tick           = 10 * time.Millisecond // timeout and deadline granularity
	connectBackoff = 10 * time.Millisecond // after a failed connect
	readBufSize    = 64 << 10
	maxEvents      = 256
)

type conn struct {
	fd      int
	idx     int32 // index in the worker's conns, carried in epoll events
	state   uint8
	counted bool  // the request started in the measured window
	retried bool  // a stale keep-alive connection was already retried
	gotByte bool  // a byte of the response has arrived
	peerFIN bool  // the server's FIN has arrived (EPOLLRDHUP)
	opened  uint8 // connections this request opened (a stale keep-alive retry opens a second)
	sent    int
	served  int   // responses on this fd
	rbytes  int64 // bytes read for this request

	tStart   int64 // latency start: scheduled time (open loop) or send time, ns since base
	tBegin   int64 // when the request was really started
	lastIO   int64 // when it last made progress (began, connected, wrote, read): the idle timeout counts from here
	tConnect int64 // when connect began; 0 on a reused connection
	connDur  int64
	tWritten int64
	tFirst   int64
	wakeAt   int64 // stWaiting: when to start
	nextSend int64 // open loop: scheduled time of the next request

	p respParser
}

// worker is one event loop and its statistics.
type worker struct {
	sh     *shared
	sa     syscall.Sockaddr // its own: Connect writes into it
	epfd   int
	conns  []conn
	events []syscall.EpollEvent
	buf    []byte

	active   int // connections not stDone
	waiting  int // connections in stWaiting
	stopping bool

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
	docLen       atomic.Int64
	abort        atomic.Bool
	headOnly     bool
	bigRequest   bool
}

func (s *shared) now() int64 { return int64(time.Since(s.base)) }

func newWorker(sh *shared, nconns int) (*worker, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &worker{
		sh:     sh,
		sa:     copySockaddr(sh.sa),
		epfd:   epfd,
		conns:  make([]conn, nconns),
		events: make([]syscall.EpollEvent, min(maxEvents, nconns+1)),
		buf:    make([]byte, readBufSize),
		stats:  newStats(),
		active: nconns,
	}
	for i := range w.conns {
		w.conns[i].fd = -1
		w.conns[i].idx = int32(i)
	}
	return w, nil
}

// run drives the loop until every connection is done or the run aborts.
// first is the global index of this worker's first connection and stride the
// number of workers, for the open-loop schedule.
func (w *worker) run(first, stride int) {
	sh := w.sh
	now := sh.now()
	for i := range w.conns {
		c := &w.conns[i]
		if sh.interval > 0 {
			// Request k of the run is due at k/rate; connection j sends
			// requests j, j+n, j+2n, ...
			c.nextSend = int64(float64(first+i*stride) * float64(sh.interval) / float64(sh.cfg.Connections))
		}
		w.next(c, now)
	}
	lastTick := now
	for w.active > 0 && !sh.abort.Load() {
		wait := int(tick / time.Millisecond)
		if w.waiting > 0 {
			if d := (w.nextWake() - sh.now()) / int64(time.Millisecond); d < int64(wait) {
				wait = int(max(d, 0))
			}
		}
		n, err := syscall.EpollWait(w.epfd, w.events, wait)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			break
		}
		for i := range n {
			ev := &w.events[i]
			c := &w.conns[ev.Fd]
			w.onEvent(c, ev.Events, sh.now())
		}
		now = sh.now()
		if !w.stopping && sh.deadline > 0 && now >= sh.deadline {
			w.stopping = true
		}
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
		if c := &w.conns[i]; c.state == stWaiting && c.wakeAt < next {
			next = c.wakeAt
		}
	}
	return next
}

// wake starts the waiting connections that are due (or ends them when the
// run is stopping).
func (w *worker) wake(now int64) {
	for i := range w.conns {
		c := &w.conns[i]
		if c.state != stWaiting {
			continue
		}
		if w.stopping || c.wakeAt <= now {
			w.waiting--
			c.state = stIdle
			w.next(c, now)
		}
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
		case stConnecting, stWriting, stReading:
			switch {
			case cut:
				w.fail(c, outCut, now, 0)
			case sh.whole || now-c.lastIO < sh.timeout:
				// wrk's timeout is counted when the response comes.
			case c.state == stConnecting:
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
		w.finish(c)
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
	c.counted = start >= sh.measureStart
	if c.counted && sh.budget > 0 && sh.issued.Add(1) > sh.budget {
		w.finish(c)
		return
	}
	c.tStart, c.tBegin = start, now
	c.retried, c.opened, c.rbytes = false, 0, 0
	w.begin(c, now)
}

// begin sends the current request, connecting first when needed.
func (w *worker) begin(c *conn, now int64) {
	c.sent, c.gotByte, c.peerFIN, c.lastIO = 0, false, false, now
	c.p.reset(w.sh.headOnly, w.server == "")
	if c.fd >= 0 {
		c.tConnect, c.connDur = 0, 0
		w.write(c, now)
		return
	}
	c.tConnect = now
	if err := w.dial(c); err != nil {
		errno, _ := err.(syscall.Errno)
		w.connectFailed(c, errno, now)
		return
	}
	// On loopback the handshake is usually over when connect returns:
	// writing now saves a trip through epoll (EAGAIN if it is not).
	w.write(c, now)
}

func (w *worker) dial(c *conn) error {
	sh := w.sh
	fd, err := syscall.Socket(sh.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if sh.bigRequest {
		// One write per request: Nagle matters only when it is split.
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	}
	ev := syscall.EpollEvent{Events: epollFlags, Fd: c.idx}
	if err := syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		return err
	}
	c.fd, c.served = fd, 0
	err = syscall.Connect(fd, w.sa)
	if err != nil && err != syscall.EINPROGRESS {
		return err
	}
	c.state = stConnecting
	return nil
}

func (w *worker) onEvent(c *conn, ev uint32, now int64) {
	switch c.state {
	case stConnecting:
		if ev&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			// Failure path only: ask the socket why.
			errno, _ := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
			w.connectFailed(c, syscall.Errno(errno), now)
			return
		}
		if ev&syscall.EPOLLOUT != 0 {
			w.write(c, now)
		}
	case stWriting:
		w.write(c, now)
	case stReading:
		w.read(c, ev, now)
	case stClosing:
		if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
			w.awaitFIN(c, now)
		}
	case stIdle, stWaiting, stDone:
		if c.fd >= 0 && ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
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
				errno, _ := err.(syscall.Errno)
				w.connectFailed(c, errno, now)
			case !w.retryStale(c, now):
				w.fail(c, outWrite, now, 0)
			}
			return
		}
		if c.state == stConnecting {
			// The first byte went out: the connection is up.
			c.connDur = w.sh.now() - c.tConnect
			c.state = stWriting
			c.opened++
			w.prog.connected.Add(1)
		}
		c.sent += n
		c.lastIO = now
	}
	c.tWritten = now
	c.state = stReading
}

func (w *worker) read(c *conn, ev uint32, now int64) {
	for {
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
		c.rbytes += int64(n)
		c.lastIO = now
		c.peerFIN = ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP) != 0
		if !c.gotByte {
			c.gotByte, c.tFirst = true, now
		}
		used, err := c.p.feed(w.buf[:n])
		if err != nil {
			w.fail(c, outRead, now, 0)
			return
		}
		if c.p.done() {
			w.complete(c, now, used == n && c.p.reuse())
			return
		}
		if n < len(w.buf) && ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP) == 0 {
			// Drained: the next edge brings the rest. When the peer's
			// FIN came with the data, no edge will follow: read on to
			// the end of the stream.
			return
		}
	}
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
	w.record(c, now)
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
	for {
		n, err := rawRead(c.fd, w.buf)
		if err == syscall.EAGAIN {
			return
		}
		if err != nil || n == 0 {
			w.closed(c, now)
			return
		}
		// Bytes after a complete response on a closing connection are
		// not part of any response: read past them.
	}
}

// closed closes a connection in stClosing and starts the next request.
func (w *worker) closed(c *conn, now int64) {
	w.closeFd(c)
	c.state = stIdle
	w.next(c, now)
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

// fail ends the current request with the given outcome, closes the
// connection and starts the next request, after backoff if given.
func (w *worker) fail(c *conn, outcome int, now int64, backoff time.Duration) {
	w.closeFd(c)
	w.recordFailure(c, outcome, now)
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
	if c.fd >= 0 {
		rawClose(c.fd) // also removes it from the epoll set
		c.fd = -1
	}
}
