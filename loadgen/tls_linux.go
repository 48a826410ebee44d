//go:build linux

package loadgen

import (
	"crypto/tls"
	"fmt"
	"io"
	"iter"
	"net"
	"os"
	"syscall"
	"time"
)

// crypto/tls is made for blocking connections; the engine's are
// non-blocking, driven by one event loop. What crypto/tls does with the
// errors of the connection under it decides how the two meet:
//
//   - A read error that is a Temporary net.Error is not kept: the record
//     read so far stays buffered and the next Read goes on from it. So
//     Read returns errWouldBlock when the socket is drained, and the loop
//     calls it again at the next input edge.
//   - Any write error is kept for good (a record cut in two cannot be
//     finished), so Write never fails with EAGAIN: what the kernel does not
//     take waits in pend, which the loop flushes at the next output edge.
//   - A handshake that meets an error, even a Temporary one, has failed:
//     its state lives on the stack of Handshake. So each handshake runs as
//     a coroutine (iter.Pull) on the loop's own thread, which gives the
//     thread back to the loop where it would block and is resumed at the
//     next edge of its socket: no goroutine to schedule, nothing to hand
//     back.

// wouldBlock is the Temporary error of a drained socket.
type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

// handshakeStopped ends a handshake the loop gave up on (timeout, end of
// the run).
type handshakeStopped struct{}

func (handshakeStopped) Error() string   { return "TLS handshake stopped" }
func (handshakeStopped) Timeout() bool   { return true }
func (handshakeStopped) Temporary() bool { return false }

var (
	errWouldBlock       net.Error = wouldBlock{}
	errHandshakeStopped net.Error = handshakeStopped{}
)

// fdConn is the net.Conn that crypto/tls reads and writes: a connection's
// non-blocking socket. The loop owns the socket and closes it.
type fdConn struct {
	fd int
	// readable says an input edge came since a read last found the
	// socket drained: without it Read reports errWouldBlock without
	// asking the kernel, so a response costs one read, not two.
	readable bool
	hup      bool   // the peer's FIN came: read on to the end of the stream
	up       bool   // a write went through: the TCP connection is established
	pend     []byte // what the kernel did not take
	max      int    // bound of pend (shared.pendMax); 0: none
	// yield, while a handshake runs, hands the thread back to the loop
	// until the socket's next edge; false means the loop gave up.
	yield func(struct{}) bool
	addr  net.Addr

	// The TLS records read: ends counts those read to their end, taken
	// those crypto/tls has surely handled (one per Read that returned
	// data; all at a would-block). While taken < ends crypto/tls may hold
	// a whole record: the loop must call Read again even though the
	// socket is drained. Otherwise it need not, and spares the
	// allocation crypto/tls makes for each Read that reaches this conn
	// (golang/go#53142).
	ends, taken int64
	recLeft     int     // bytes of the current record still to come
	hdr         [5]byte // a record header cut by the end of a read
	hdrN        int
}

// reset prepares c for a new socket.
func (c *fdConn) reset(fd int, addr net.Addr) {
	c.fd, c.addr = fd, addr
	c.readable, c.hup, c.up, c.yield = false, false, false, nil
	c.pend = c.pend[:0]
	c.ends, c.taken, c.recLeft, c.hdrN = 0, 0, 0, 0
}

// frame follows the TLS record framing of bytes read, counting the
// records whose end they hold.
func (c *fdConn) frame(b []byte) {
	for len(b) > 0 {
		if c.recLeft > 0 {
			k := min(len(b), c.recLeft)
			c.recLeft -= k
			b = b[k:]
			if c.recLeft == 0 {
				c.ends++
			}
			continue
		}
		k := copy(c.hdr[c.hdrN:], b)
		c.hdrN += k
		b = b[k:]
		if c.hdrN == len(c.hdr) {
			c.recLeft, c.hdrN = int(c.hdr[3])<<8|int(c.hdr[4]), 0
			if c.recLeft == 0 {
				c.ends++
			}
		}
	}
}

// tlsRead reads through crypto/tls, keeping count of the records it
// handled.
func (c *fdConn) tlsRead(tc *tls.Conn, b []byte) (int, error) {
	n, err := tc.Read(b)
	switch {
	case n > 0:
		c.taken++
	case err == errWouldBlock:
		c.taken = c.ends
	}
	return n, err
}

// more reports whether a Read may return data without a new edge: the
// socket may hold more, or crypto/tls a whole record.
func (c *fdConn) more() bool { return c.readable || c.taken < c.ends }

// edge notes an epoll event of the socket.
func (c *fdConn) edge(ev uint32) {
	if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		c.readable = true
	}
	if ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		c.hup = true
	}
}

// readHook, when set (by a test, before a run), is called for each Read
// of an fdConn: over TLS, each read crypto/tls asks of the socket.
var readHook func()

// Read reads what the socket holds; errWouldBlock when it is drained (in
// a handshake: once the socket has something, or the loop gave up).
func (c *fdConn) Read(b []byte) (int, error) {
	if readHook != nil {
		readHook()
	}
	for {
		if c.fd < 0 {
			return 0, net.ErrClosed
		}
		if c.readable && len(b) > 0 {
			n, err := rawRead(c.fd, b)
			switch {
			case err == nil && n == 0:
				return 0, io.EOF
			case err == nil:
				if n < len(b) && !c.hup {
					c.readable = false
				}
				c.frame(b[:n])
				return n, nil
			case err != syscall.EAGAIN:
				return 0, &net.OpError{Op: "read", Net: "tcp", Addr: c.addr, Err: os.NewSyscallError("read", err)}
			}
			c.readable = false
		}
		if c.yield == nil {
			return 0, errWouldBlock
		}
		if !c.yield(struct{}{}) {
			return 0, errHandshakeStopped
		}
	}
}

// Write writes b, or keeps in pend what the kernel does not take now: it
// never fails for want of room.
func (c *fdConn) Write(b []byte) (int, error) {
	if c.fd < 0 {
		return 0, net.ErrClosed
	}
	n := len(b)
	for len(c.pend) == 0 && len(b) > 0 {
		k, err := rawWrite(c.fd, b)
		if err == syscall.EAGAIN {
			break
		}
		if err != nil {
			return n - len(b), &net.OpError{Op: "write", Net: "tcp", Addr: c.addr, Err: os.NewSyscallError("write", err)}
		}
		c.up = true
		b = b[k:]
	}
	if c.max > 0 && len(c.pend)+len(b) > c.max {
		// The server does not read what it makes the client write.
		return n - len(b), errBacklog
	}
	c.pend = append(c.pend, b...)
	return n, nil
}

var errBacklog = fmt.Errorf("%w: more output than the server reads (the connection's write buffer is full)", ErrLimit)

// flush writes what waits in pend; it reports whether pend is empty. Its
// error is the socket's (a refused connect, a reset).
func (c *fdConn) flush() (bool, error) {
	for len(c.pend) > 0 {
		k, err := rawWrite(c.fd, c.pend)
		if err == syscall.EAGAIN {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		c.up = true
		c.pend = c.pend[:copy(c.pend, c.pend[k:])]
	}
	return true, nil
}

// Close does nothing: the loop closes the socket.
func (c *fdConn) Close() error { return nil }

// LocalAddr returns the peer's address too: crypto/tls asks only for its
// error messages.
func (c *fdConn) LocalAddr() net.Addr { return c.addr }

// RemoteAddr is the server's address.
func (c *fdConn) RemoteAddr() net.Addr { return c.addr }

// SetDeadline does nothing: the loop keeps the time.
func (c *fdConn) SetDeadline(time.Time) error { return nil }

// SetReadDeadline does nothing: the loop keeps the time.
func (c *fdConn) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline does nothing: the loop keeps the time.
func (c *fdConn) SetWriteDeadline(time.Time) error { return nil }

// tlsConn is a connection's TLS layer: crypto/tls over its socket, and
// the handshake's coroutine while it runs.
type tlsConn struct {
	fc   *fdConn
	tc   *tls.Conn
	next func() (struct{}, bool) // resumes the handshake
	stop func()
	err  error // the handshake's
}

// handshake starts the TLS handshake over a new socket (connected or
// connecting) and runs it until it waits for the socket. It reports
// whether the handshake is over (then err says how it went).
func (t *tlsConn) handshake(fc *fdConn, cfg *tls.Config) bool {
	t.fc, t.err = fc, nil
	t.tc = tls.Client(fc, cfg)
	t.next, t.stop = iter.Pull(func(yield func(struct{}) bool) {
		fc.yield = yield
		t.err = t.tc.Handshake()
		fc.yield = nil
	})
	return t.resume()
}

// resume goes on with the handshake after an edge of the socket; it
// reports whether the handshake is over.
func (t *tlsConn) resume() bool {
	if _, more := t.next(); more {
		return false
	}
	t.next, t.stop = nil, nil
	return true
}

// running reports whether a handshake waits for the socket.
func (t *tlsConn) running() bool { return t.next != nil }

// abort ends a running handshake (it fails with errHandshakeStopped) and
// forgets the connection. The loop calls it before it closes the socket.
func (t *tlsConn) abort() {
	if t.fc != nil {
		t.fc.fd = -1 // nothing the failing handshake does reaches the socket
	}
	if t.stop != nil {
		t.stop()
		t.next, t.stop = nil, nil
	}
	t.tc = nil
}

// The engine's side of TLS: the handshake driven by the socket's edges,
// the request written and the response read through crypto/tls.

// handshake starts the TLS handshake of c's new connection.
func (w *worker) handshake(c *conn, now int64) {
	c.state = stHandshake
	w.handshakeStep(c, now, c.tl.handshake(&c.fc, w.sh.tls))
}

// handshakeEvent goes on with c's handshake after an epoll event.
func (w *worker) handshakeEvent(c *conn, ev uint32, now int64) {
	if !c.fc.up && ev&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
		w.socketFailed(c, now)
		return
	}
	c.fc.edge(ev)
	if _, err := c.fc.flush(); err != nil {
		w.setupFailed(c, err, now)
		return
	}
	c.lastIO = now
	w.handshakeStep(c, now, c.tl.resume())
}

// handshakeStep books what the handshake's last step did: the TCP
// connection established (its first write went through), the handshake's
// end. Then the request goes out (HTTP/2: the connection's streams).
func (w *worker) handshakeStep(c *conn, now int64, done bool) {
	if c.fc.up && !c.up {
		w.connected(c, now)
	}
	if !done {
		return
	}
	if c.tl.err != nil {
		w.setupFailed(c, c.tl.err, now)
		return
	}
	w.answered(c) // the server's handshake came
	end := w.sh.now()
	c.hsDur, c.connDur = end-c.tUp, end-c.tConnect
	st := c.tl.tc.ConnectionState()
	c.handshook, c.resumed = true, st.DidResume
	if w.tlsInfo == nil {
		i := tlsInfoOf(st, w.sh.serverName)
		w.tlsInfo = &i
	}
	if w.sh.h2 {
		if st.NegotiatedProtocol != "h2" {
			w.setupFailed(c, noH2(st.NegotiatedProtocol), now)
			return
		}
		w.prog.ready.Add(1)
		c.state = stH2
		w.h2Ready(c)
		w.h2Pump(c, now)
		return
	}
	w.prog.ready.Add(1)
	w.sendTLS(c, now)
}

// setupFailed ends the requests of a connection whose set-up failed: a
// connect error before TCP was up, else a failed TLS handshake (or an
// HTTP/2 server that is none), noted for the run's error.
func (w *worker) setupFailed(c *conn, err error, now int64) {
	if !c.fc.up {
		w.dialFailed(c, err, outWrite, now)
		return
	}
	err, lasting := handshakeErr(err, w.sh.h2)
	w.sh.noteSetup(err, lasting)
	w.prog.setupFails.Add(1)
	w.fail(c, outTLS, now, connectBackoff)
}

// sendTLS writes the request through crypto/tls, whole: what the socket
// does not take now waits in c.fc.pend.
func (w *worker) sendTLS(c *conn, now int64) {
	if _, err := c.tl.tc.Write(w.sh.req); err != nil {
		if !w.retryStale(c, now) {
			w.fail(c, failOutcome(err, outWrite), now, 0)
		}
		return
	}
	c.sent, c.lastIO = len(w.sh.req), now
	w.flushTLS(c, now)
}

// flushTLS writes what the socket did not take of the request.
func (w *worker) flushTLS(c *conn, now int64) {
	done, err := c.fc.flush()
	switch {
	case err != nil:
		if !w.retryStale(c, now) {
			w.fail(c, outWrite, now, 0)
		}
	case !done:
		c.state = stWriting
	default:
		c.tWritten = now
		c.state = stReading
	}
}

// readTLS reads the response through crypto/tls until the socket is
// drained or the response ends.
func (w *worker) readTLS(c *conn, now int64) {
	for reads := 1; ; reads++ {
		n, err := c.fc.tlsRead(c.tl.tc, w.buf)
		if n > 0 {
			c.peerFIN = c.fc.hup || err == io.EOF
			if w.got(c, n, now) {
				return
			}
		}
		switch {
		case err == nil:
			if !c.fc.more() {
				return // the next edge brings the rest
			}
			if reads >= maxReads {
				w.readLater(c, evIn)
				return
			}
		case err == errWouldBlock:
			return
		case err == io.EOF && c.p.eof():
			c.peerFIN = true
			w.complete(c, now, false)
			return
		case !c.gotByte && w.retryStale(c, now):
			return
		default:
			w.fail(c, failOutcome(err, outRead), now, 0)
			return
		}
	}
}
