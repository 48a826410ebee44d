//go:build linux

package loadgen

import (
	"errors"
	"syscall"
)

// The engine's side of HTTP/2: each connection carries up to
// Config.Streams requests at once, one per stream slot. A stream that ends
// is booked as an HTTP/1.x request is (record, recordFailure) and its slot
// starts the next request at once (closed loop) or when the next one is
// due (open loop). The streams of a new connection are opened before it
// connects: their HEADERS go out right behind the preface, and their
// latency counts the connect, as an HTTP/1.x request's does. The
// connection's frames are handled by h2Client (h2.go); everything it
// queues while one read is handled goes out in one write.

// h2conn is one connection's HTTP/2 state.
type h2conn struct {
	cl    h2Client
	reqs  []request // the request of each stream slot
	retry []request // requests a GOAWAY left unprocessed: the next connection sends them
	// waiting: an open-loop connection waits for c.wakeAt to start its
	// next request (counted in worker.waiting).
	waiting  bool
	settings bool // the server's SETTINGS came
	goAway   bool // the server's GOAWAY came (and was counted)
	done     bool // the request budget is spent: no new request
}

// h2Connect opens a new connection and its first streams; without a
// request to send, the connection is done.
func (w *worker) h2Connect(c *conn, now int64) {
	h := c.h2
	h.cl.wantServer = w.server == ""
	h.cl.init(&w.sh.h2req, len(h.reqs))
	h.settings, h.waiting, h.goAway = false, false, false
	c.request = request{}
	c.state = stIdle
	w.h2Open(c, now)
	if h.cl.open == 0 {
		if w.sh.interval > 0 && !h.done && !w.stopping {
			w.sleep(c, c.nextSend)
			return
		}
		w.finish(c)
		return
	}
	c.lastIO = now
	w.dial(c, now)
}

// h2Open starts requests on the free stream slots: those a GOAWAY left
// unprocessed first, then new ones while the run allows.
func (w *worker) h2Open(c *conn, now int64) {
	h, sh := c.h2, w.sh
	for h.cl.canOpen() {
		var rq request
		if n := len(h.retry); n > 0 {
			rq, h.retry = h.retry[n-1], h.retry[:n-1]
			rq.retried2, rq.opened, rq.handshook, rq.connDur, rq.hsDur = true, 0, false, 0, 0
			rq.winBytes, rq.winBody = 0, 0 // a new stream: its bytes are its own
		} else {
			if h.done || w.stopping || sh.abort.Load() || (sh.deadline > 0 && now >= sh.deadline) {
				return
			}
			start := now
			if sh.interval > 0 {
				if c.nextSend > now {
					if c.state == stH2 && !h.waiting {
						h.waiting, c.wakeAt = true, c.nextSend
						w.waiting++
					}
					return
				}
				start = c.nextSend
				c.nextSend += sh.interval
			}
			counted := sh.inWindow(start)
			if counted && sh.budget > 0 && sh.issued.Add(1) > sh.budget {
				h.done = true
				return
			}
			rq = request{counted: counted, tStart: start, tBegin: now}
		}
		slot := h.cl.openStream()
		rq.sent, rq.tWritten = int(h.cl.streams[slot].sent), now
		h.reqs[slot] = rq
	}
}

// h2Ready books the set-up of c's connection (TCP, TLS) on the first
// stream that waited for it, as the request that opened it: one connect
// time per connection, as for HTTP/1.x. The other streams that waited
// count the wait in their latency (and processing time) only.
func (w *worker) h2Ready(c *conn) {
	h := c.h2
	ready := w.sh.now()
	first := true
	for i := range h.cl.streams {
		if h.cl.streams[i].sid == 0 {
			continue
		}
		rq := &h.reqs[i]
		rq.tWritten = ready
		if first {
			first = false
			rq.opened, rq.handshook, rq.resumed = c.opened, c.handshook, c.resumed
			rq.connDur, rq.hsDur = ready-c.tConnect, c.hsDur
		}
	}
	c.opened = 0
}

// h2Event handles an epoll event of an HTTP/2 connection.
func (w *worker) h2Event(c *conn, ev uint32, now int64) {
	if !c.fc.up && ev&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
		w.socketFailed(c, now)
		return
	}
	c.fc.edge(ev)
	if len(c.fc.pend) > 0 {
		drained, err := c.fc.flush()
		if err != nil {
			w.h2WriteFailed(c, err, now)
			return
		}
		if drained {
			c.h2.cl.ctrl = 0
		}
		w.h2Up(c, now)
	}
	w.h2Read(c, now)
}

// h2Up books an h2c connection whose first bytes went out.
func (w *worker) h2Up(c *conn, now int64) {
	if c.fc.up && !c.up {
		w.connected(c, now)
		w.h2Ready(c)
	}
}

// h2WriteFailed ends a connection whose write failed: a connect error if
// it never connected.
func (w *worker) h2WriteFailed(c *conn, err error, now int64) {
	if !c.fc.up {
		w.dialFailed(c, err, outWrite, now)
		return
	}
	w.fail(c, failOutcome(err, outWrite), now, 0)
}

// h2Read reads and handles what the connection holds, then sends what
// that queued and starts the requests the ended streams make room for.
func (w *worker) h2Read(c *conn, now int64) {
	h := c.h2
	for reads := 1; ; reads++ {
		var n int
		var err error
		if c.tl.tc != nil {
			n, err = c.fc.tlsRead(c.tl.tc, w.buf)
		} else {
			n, err = c.fc.Read(w.buf)
		}
		if n > 0 {
			c.lastIO = now
			w.answered(c)
			ferr := h.cl.feed(w.buf[:n])
			if !h.settings && h.cl.settings {
				h.settings = true
				if c.tl.tc == nil {
					w.prog.ready.Add(1)
				}
				if h.cl.maxStreams != 1<<32-1 {
					w.maxStreams = int64(h.cl.maxStreams)
				}
			}
			if h.cl.goAway && !h.goAway {
				h.goAway = true
				w.goAways++
			}
			w.h2Events(c, now)
			if ferr != nil {
				w.h2ProtocolFailed(c, ferr, now)
				return
			}
			// Acknowledgements go out as they come, so that h2MaxControl
			// counts only those the server leaves unread.
			if h.cl.ctrl > 0 && !w.h2Flush(c, now) {
				return
			}
		}
		switch {
		case err == nil && (c.fc.more() || c.tl.tc == nil && c.fc.readable):
			if reads >= maxReads {
				w.h2Pump(c, now)
				if c.state == stH2 {
					w.readLater(c, evIn)
				}
				return
			}
			continue
		case err == nil, err == errWouldBlock:
			// Drained (and crypto/tls holds no whole record): the next
			// edge brings the rest.
			w.h2Pump(c, now)
			return
		}
		// The server closed the connection (after a GOAWAY, or not):
		// the streams still in flight failed.
		w.fail(c, failOutcome(err, outRead), now, 0)
		return
	}
}

// h2ProtocolFailed ends a connection whose server broke HTTP/2; one that
// never sent SETTINGS speaks no HTTP/2 at all.
func (w *worker) h2ProtocolFailed(c *conn, err error, now int64) {
	if c.h2.settings {
		w.fail(c, failOutcome(err, outRead), now, 0)
		return
	}
	w.sh.noteSetup(err, errors.Is(err, ErrNoH2))
	w.prog.setupFails.Add(1)
	w.fail(c, outTLS, now, connectBackoff)
}

// h2Events books the streams that the last feed ended.
func (w *worker) h2Events(c *conn, now int64) {
	h := c.h2
	for _, e := range h.cl.events {
		rq, s := &h.reqs[e.slot], &h.cl.streams[e.slot]
		rq.rbytes, rq.head, rq.body = s.bytes, s.head, s.body
		switch e.kind {
		case h2EvFirstByte:
			rq.tFirst = now
		case h2EvDone:
			rq.status, rq.body, rq.sent, rq.keepAlive = s.status, s.body, int(s.sent), true
			w.record(rq, c.thread, now)
		case h2EvReset:
			w.recordFailure(rq, outReset, e.code, now)
		case h2EvRefused:
			h.retry = append(h.retry, *rq)
		}
	}
	h.cl.events = h.cl.events[:0]
	if w.server == "" && len(h.cl.server) > 0 {
		w.server = string(h.cl.server)
	}
}

// h2Pump starts the requests there is room for, writes what is queued,
// and ends a connection that will carry no more: after a GOAWAY, or
// once the run is over, when its last stream has ended.
func (w *worker) h2Pump(c *conn, now int64) {
	h := c.h2
	if c.state != stH2 {
		return
	}
	w.h2Open(c, now)
	if !w.h2Flush(c, now) {
		return
	}
	if h.cl.open > 0 || h.waiting {
		return
	}
	over := w.stopping || w.sh.abort.Load() || (w.sh.deadline > 0 && now >= w.sh.deadline)
	if h.cl.goAway || h.done || over {
		w.closeFd(c)
		c.state = stIdle
		w.next(c, now)
	}
}

// h2Flush writes what the client queued; false when the write failed
// and ended the connection.
func (w *worker) h2Flush(c *conn, now int64) bool {
	h := c.h2
	if len(h.cl.out) == 0 {
		return true
	}
	var err error
	if c.tl.tc != nil {
		_, err = c.tl.tc.Write(h.cl.out)
	} else {
		_, err = c.fc.Write(h.cl.out)
	}
	h.cl.out = h.cl.out[:0]
	if err != nil {
		w.h2WriteFailed(c, err, now)
		return false
	}
	if len(c.fc.pend) == 0 {
		h.cl.ctrl = 0
	}
	w.h2Up(c, now)
	return true
}

// h2FailStreams ends every stream in flight on c with the outcome; at
// the end of the drain, the requests waiting to be sent again too.
func (w *worker) h2FailStreams(c *conn, outcome int, now int64) {
	h := c.h2
	for i := range h.cl.streams {
		if s := &h.cl.streams[i]; s.sid != 0 {
			rq := &h.reqs[i]
			rq.rbytes, rq.head, rq.body = s.bytes, s.head, s.body
			w.recordFailure(rq, outcome, 0, now)
			s.sid = 0
		}
	}
	h.cl.open = 0
	if outcome == outCut {
		for i := range h.retry {
			w.recordFailure(&h.retry[i], outCut, 0, now)
		}
		h.retry = h.retry[:0]
	}
}
