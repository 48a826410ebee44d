//go:build linux

package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
)

// Servers that attack the client: each is a real socket on loopback that
// never reads what the client writes, or never ends a response. The
// client must bound what it keeps, close such a connection with a counted
// error (Errors.Limit) and end the run on time.

// floodServer sends first, then burst over and over until the client
// goes away or the test ends, reading nothing.
func floodServer(t *testing.T, first, burst []byte, readRequest bool) string {
	addr, _ := floodServerStop(t, first, burst, readRequest, false)
	return addr
}

// floodServerStop is floodServer that reads (and drops) what the client
// sends when drain is set, and returns a func that stops the flood (it
// closes the connections: a write blocked on a client that reads
// nothing returns).
func floodServerStop(t *testing.T, first, burst []byte, readRequest, drain bool) (string, func()) {
	t.Helper()
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	stopped := false
	// A small receive buffer, so a client that answers each frame fills
	// the socket soon, however slowly a busy box runs it: with the
	// kernel's megabytes it had to parse a million frames in the run's
	// second first, and under load it did not.
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	serve(t, ln, func(c net.Conn) {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		conns[c] = true
		mu.Unlock()
		if readRequest {
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
		}
		if drain {
			go io.Copy(io.Discard, c)
		}
		if _, err := c.Write(first); err != nil {
			return
		}
		for {
			if _, err := c.Write(burst); err != nil {
				return
			}
		}
	})
	stop := sync.OnceFunc(func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		for c := range conns {
			c.Close()
		}
	})
	t.Cleanup(stop)
	return addr, stop
}

// repeat returns frame repeated to at least 64 KiB.
func repeat(frame []byte) []byte {
	b := make([]byte, 0, 64<<10+len(frame))
	for len(b) < 64<<10 {
		b = append(b, frame...)
	}
	return b
}

func h2FrameBytes(typ, flags uint8, payload []byte) []byte {
	b := appendFrameHeader(nil, len(payload), typ, flags, 0)
	return append(b, payload...)
}

// boundedRun runs cfg while watching the Go heap; it fails the test when
// the run takes longer than within or the heap grows by more than
// maxGrowth, and returns the result.
func boundedRun(t *testing.T, cfg Config, within time.Duration, maxGrowth uint64) *report.LoadResult {
	return boundedRunStop(t, cfg, within, maxGrowth, func() {})
}

// boundedRunStop is boundedRun that calls stop (to silence the server: a
// client deaf to its cancel ends only then) when the run is over time.
func boundedRunStop(t *testing.T, cfg Config, within time.Duration, maxGrowth uint64, stop func()) *report.LoadResult {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		r   *report.LoadResult
		err error
	}
	done := make(chan out, 1)
	start := time.Now()
	go func() {
		r, err := Run(ctx, cfg)
		done <- out{r, err}
	}()
	tk := time.NewTicker(20 * time.Millisecond)
	defer tk.Stop()
	var peak uint64
	for {
		select {
		case o := <-done:
			if o.err != nil {
				t.Fatal(o.err)
			}
			t.Logf("run took %v, heap grew by at most %d KiB; errors %+v, cut %d", time.Since(start).Round(time.Millisecond),
				peak/1024, o.r.Errors, o.r.Drained.Cut)
			return o.r
		case <-tk.C:
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base {
				peak = max(peak, ms.HeapInuse-base)
			}
			over := peak > maxGrowth
			late := time.Since(start) > within
			if over || late {
				cancel()
				stop()
				o := <-done
				t.Fatalf("after %v: heap grew by %d MiB (bound %d MiB), run still going: %v; result %+v",
					time.Since(start).Round(time.Millisecond), peak>>20, maxGrowth>>20, late, o.r)
			}
		}
	}
}

// TestH2PingFloodIsBounded: a server that floods PINGs and reads
// nothing makes the client queue an acknowledgement per PING; they are
// bounded (h2MaxControl), the connection closed with a Limit error, and
// -d ends the run.
func TestH2PingFloodIsBounded(t *testing.T) {
	settings := h2FrameBytes(h2Settings, 0, nil)
	ping := h2FrameBytes(h2Ping, 0, []byte("12345678"))
	addr := floodServer(t, settings, repeat(ping), false)
	r := boundedRun(t, Config{URL: "http://" + addr + "/", HTTP2: true, Duration: time.Second, Timeout: time.Second},
		8*time.Second, 64<<20)
	if r.Errors.Limit == 0 {
		t.Errorf("no request counted as over a limit: %+v", r.Errors)
	}
}

// TestH2SettingsFloodIsBounded is the same with empty SETTINGS frames,
// each asking for an acknowledgement.
func TestH2SettingsFloodIsBounded(t *testing.T) {
	settings := h2FrameBytes(h2Settings, 0, nil)
	addr := floodServer(t, settings, repeat(settings), false)
	r := boundedRun(t, Config{URL: "http://" + addr + "/", HTTP2: true, Duration: time.Second, Timeout: time.Second},
		8*time.Second, 64<<20)
	if r.Errors.Limit == 0 {
		t.Errorf("no request counted as over a limit: %+v", r.Errors)
	}
}

// TestEndlessHeadersAreCut: an HTTP/1.1 response whose header lines never
// end is cut at maxHeaderBlock, a Limit error; the -n run ends at once.
func TestEndlessHeadersAreCut(t *testing.T) {
	line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
	addr := floodServer(t, []byte("HTTP/1.1 200 OK\r\n"), repeat([]byte(line)), true)
	r := boundedRun(t, Config{URL: "http://" + addr + "/", Requests: 1}, 5*time.Second, 64<<20)
	if r.Errors.Limit != 1 || r.Completed != 0 {
		t.Errorf("errors %+v, completed %d: want the request counted as over a limit", r.Errors, r.Completed)
	}
}

// TestContinueForeverIsCut: 100 Continue after 100 Continue counts in the
// response's header block: cut there.
func TestContinueForeverIsCut(t *testing.T) {
	cont := []byte("HTTP/1.1 100 Continue\r\n\r\n")
	addr := floodServer(t, cont, repeat(cont), true)
	r := boundedRun(t, Config{URL: "http://" + addr + "/", Requests: 1}, 5*time.Second, 64<<20)
	if r.Errors.Limit != 1 {
		t.Errorf("errors %+v: want the request counted as over a limit", r.Errors)
	}
}

// TestSlowBodyEndsAtMaxTime: a -n run against a body that comes a byte at
// a time (never idle long enough to time out) ends at MaxTime, its
// request cut.
func TestSlowBodyEndsAtMaxTime(t *testing.T) {
	var stopped atomic.Bool
	t.Cleanup(func() { stopped.Store(true) })
	addr, _ := connServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"))
		for !stopped.Load() {
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	start := time.Now()
	r := boundedRun(t, Config{URL: "http://" + addr + "/", Requests: 1, MaxTime: time.Second, Timeout: time.Second},
		5*time.Second, 64<<20)
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("run took %v with MaxTime 1s", took)
	}
	if r.Drained.Cut != 1 || r.Completed != 0 {
		t.Errorf("cut %d, completed %d: want the slow request cut", r.Drained.Cut, r.Completed)
	}
}

// TestH2GoAwayLoopEndsAtMaxTime: a server that answers every connection
// with GOAWAY (last stream 0) sends the client round for ever; MaxTime
// ends the -n run.
func TestH2GoAwayLoopEndsAtMaxTime(t *testing.T) {
	goAway := make([]byte, 8)
	binary.BigEndian.PutUint32(goAway[4:], 0) // NO_ERROR, last stream 0
	first := append(h2FrameBytes(h2Settings, 0, nil), h2FrameBytes(h2GoAway, 0, goAway)...)
	addr, _ := connServer(t, func(c net.Conn) {
		c.Write(first)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	})
	start := time.Now()
	boundedRun(t, Config{URL: "http://" + addr + "/", HTTP2: true, Requests: 1, MaxTime: time.Second, Timeout: time.Second},
		5*time.Second, 64<<20)
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("run took %v with MaxTime 1s", took)
	}
}

// TestUnreadOutputIsBounded: what the socket does not take waits in
// pend up to its bound (pendMax), then the write fails with ErrLimit.
func TestUnreadOutputIsBounded(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	var c fdConn
	c.reset(fds[0], nil)
	c.max = 1 << 20
	chunk := make([]byte, 64<<10)
	for total := 0; total < 64<<20; total += len(chunk) {
		if _, err = c.Write(chunk); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("64 MiB written to a peer that reads nothing: error %v, %d bytes pending", err, len(c.pend))
	}
	if len(c.pend) > c.max {
		t.Errorf("%d bytes pending, bound %d", len(c.pend), c.max)
	}
}

// TestH2PingFloodReadEndsOnTime: a server that floods PINGs and reads
// the acknowledgements trips no bound; the client still hears the end
// of the run (it reads a connection at most maxReads times in a row),
// and the stream the server never answers is cut at the drain's end.
// Each read is slowed (readHook) so that the server outpaces the client,
// as a faster machine than this one's client would.
func TestH2PingFloodReadEndsOnTime(t *testing.T) {
	readHook = func() { time.Sleep(2 * time.Millisecond) }
	defer func() { readHook = nil }()
	settings := h2FrameBytes(h2Settings, 0, nil)
	ping := h2FrameBytes(h2Ping, 0, []byte("12345678"))
	addr, stop := floodServerStop(t, settings, repeat(ping), false, true)
	start := time.Now()
	boundedRunStop(t, Config{URL: "http://" + addr + "/", HTTP2: true, Duration: time.Second, Timeout: time.Second},
		8*time.Second, 64<<20, stop)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("-d 1s --timeout 1s took %v", took)
	}
}

// TestEndlessFastBodyEndsOnTime: a body without length sent as fast as
// it is read, for ever: the run still ends at its duration and drain.
func TestEndlessFastBodyEndsOnTime(t *testing.T) {
	addr, stop := floodServerStop(t, []byte("HTTP/1.1 200 OK\r\n\r\n"), make([]byte, 64<<10), true, false)
	start := time.Now()
	r := boundedRunStop(t, Config{URL: "http://" + addr + "/", Duration: time.Second, Timeout: time.Second},
		8*time.Second, 64<<20, stop)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("-d 1s --timeout 1s took %v", took)
	}
	if r.Drained.Cut != 1 {
		t.Errorf("cut %d: want the endless response cut", r.Drained.Cut)
	}
}

// TestReadsInARowAreBounded: a connection whose socket never runs dry is
// read at most maxReads times in a row, then put aside (worker.again) so
// the loop hears its timers, the run's end and the other connections;
// for HTTP/2 and HTTP/1. The read buffer is shrunk to one frame so that
// a socket pair's buffer holds more than maxReads reads.
func TestReadsInARowAreBounded(t *testing.T) {
	for _, h2 := range []bool{true, false} {
		cfg, tg, err := Config{URL: "http://127.0.0.1/", HTTP2: h2}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		sh := &shared{cfg: cfg, h2: h2, req: buildRequest(cfg, tg), timeout: int64(time.Second)}
		sh.h2req = newH2Request(cfg, tg)
		w, err := newWorker(sh, layout(1, 1, 1)[0], 1)
		if err != nil {
			t.Fatal(err)
		}
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		ping := h2FrameBytes(h2Ping, 0, []byte("12345678"))
		w.buf = make([]byte, len(ping))
		var in []byte
		c := &w.conns[0]
		c.fd, c.up = fds[0], true
		c.fc.reset(fds[0], nil)
		c.fc.readable = true
		if h2 {
			c.state = stH2
			c.h2.cl.init(&sh.h2req, 1)
			in = append(h2FrameBytes(h2Settings, 0, nil), bytes.Repeat(ping, 2*maxReads)...)
		} else {
			c.state = stReading
			c.p.reset(false, false)
			in = append([]byte("HTTP/1.1 200 OK\r\n\r\n"), make([]byte, 2*maxReads*len(ping))...)
		}
		if _, err := syscall.Write(fds[1], in); err != nil {
			t.Fatal(err)
		}
		if h2 {
			w.h2Read(c, 0)
		} else {
			w.read(c, syscall.EPOLLIN, 0)
		}
		// What the client left unread is still in its receive queue.
		n, _ := syscall.Read(fds[0], make([]byte, len(in)))
		avail := max(n, 0)
		if !c.again || len(w.again) != 1 || avail == 0 {
			t.Errorf("h2 %v: after one event: put aside %v (%d), %d bytes left unread: want it put aside with input left",
				h2, c.again, len(w.again), avail)
		}
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		syscall.Close(w.epfd)
	}
}
