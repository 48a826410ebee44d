//go:build linux

package loadgen

import (
	"io"
	"syscall"
	"time"
)

// This file is a request's life on a connection, by its state: the next
// one started (next, begin), an epoll event handed to what the state
// waits for (onEvent), an HTTP/1.x request written and its response read
// and parsed (over TLS in tls_linux.go, HTTP/2's streams in
// h2_linux.go), and its end: completed, failed, the connection closed.

// maxReads bounds the reads of one connection in a row (4 MiB): a server
// that sends as fast as it is read would otherwise keep the loop on its
// connection for ever, deaf to the run's end, to the timeouts and to the
// other connections. The rest is read after the loop's next round of
// events (readLater).
const maxReads = 64

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
