//go:build linux

package loadgen

import "syscall"

// This file is the engine's clock: the end of a timed window
// (closeWindow), the connections that wait for their time (an open
// loop's next send, a back-off: sleep, wake), and the requests the
// server left idle for the timeout or the drain's end cuts (expire).

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

func (w *worker) sleep(c *conn, until int64) {
	c.state, c.wakeAt = stWaiting, until
	w.waiting++
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
