//go:build linux

package loadgen

import (
	"crypto/tls"
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
	// yield, while a handshake runs, hands the thread back to the loop
	// until the socket's next edge; false means the loop gave up.
	yield func(struct{}) bool
	addr  net.Addr
}

// reset prepares c for a new socket.
func (c *fdConn) reset(fd int, addr net.Addr) {
	c.fd, c.addr = fd, addr
	c.readable, c.hup, c.up, c.yield = false, false, false, nil
	c.pend = c.pend[:0]
}

// edge notes an epoll event of the socket.
func (c *fdConn) edge(ev uint32) {
	if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		c.readable = true
	}
	if ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		c.hup = true
	}
}

// Read reads what the socket holds; errWouldBlock when it is drained (in
// a handshake: once the socket has something, or the loop gave up).
func (c *fdConn) Read(b []byte) (int, error) {
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
	c.pend = append(c.pend, b...)
	return n, nil
}

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
	fc   fdConn
	tc   *tls.Conn
	next func() (struct{}, bool) // resumes the handshake
	stop func()
	err  error // the handshake's
}

// handshake starts the TLS handshake of a new socket (connected or
// connecting) and runs it until it waits for the socket. It reports
// whether the handshake is over (then err says how it went).
func (t *tlsConn) handshake(fd int, addr net.Addr, cfg *tls.Config) bool {
	t.fc.reset(fd, addr)
	t.tc = tls.Client(&t.fc, cfg)
	t.err = nil
	t.next, t.stop = iter.Pull(func(yield func(struct{}) bool) {
		t.fc.yield = yield
		t.err = t.tc.Handshake()
		t.fc.yield = nil
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

// abort ends a running handshake (it fails with errHandshakeStopped)
// and forgets the connection. The loop calls it before it closes the
// socket.
func (t *tlsConn) abort() {
	t.fc.fd = -1 // nothing the failing handshake does reaches the socket
	if t.stop != nil {
		t.stop()
		t.next, t.stop = nil, nil
	}
	t.tc = nil
}
