//go:build linux

package loadgen

import (
	"errors"
	"syscall"
	"time"
)

// This file opens the engine's connections: the ramp that opens them no
// faster than the server's listen backlog takes them (rampUp, rampMax),
// the connect on a non-blocking socket and the first bytes when epoll
// says it is up (dialed), and what a connect that failed counts as.

const (
	// rampMax bounds the connections of a run opened and not yet
	// answered (a first byte from the server) while the run opens its
	// connections: the server's listen backlog holds the connections it
	// has not accepted, and a SYN that finds it full is dropped and sent
	// again 1 s later, then 3 s (issue 28: ab -c5000 -k against nginx on
	// a busy box, edgebench's slowest connects 3.3 s, ab's, whose
	// connects are slower to issue, 0.3 s). 128 is the smallest backlog
	// in common use (Linux's somaxconn before 5.4; nginx's is 511).
	rampMax        = 128
	connectBackoff = 10 * time.Millisecond // after a failed connect
)

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

// connected books the TCP connection of c as established.
func (w *worker) connected(c *conn, now int64) {
	c.up, c.tUp = true, w.sh.now()
	c.connDur = c.tUp - c.tConnect
	c.opened++
	w.prog.connected.Add(1)
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
