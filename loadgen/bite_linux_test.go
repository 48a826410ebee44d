package loadgen

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// readWorker is a one-connection worker (HTTP/2 when h2) whose reads take n bytes each,
// so that a socket's buffer holds more than maxReads of them.
func readWorker(t *testing.T, n int, h2 bool) *worker {
	t.Helper()
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
	t.Cleanup(func() { syscall.Close(w.epfd) })
	w.buf = make([]byte, n)
	return w
}

// socketPair is a connected pair of non-blocking sockets, closed when
// the test ends.
func socketPair(t *testing.T) [2]int {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return [2]int{fds[0], fds[1]}
}

// unread is what is left in fd's receive queue.
func unread(fd int, most int) int {
	n, _ := syscall.Read(fd, make([]byte, most+1))
	return max(n, 0)
}

// TestReadsInARowExactly: a plain HTTP/1 response, HTTP/2 frames and a
// closing connection's wait for the server's FIN, whose sockets never
// run dry, are each read exactly maxReads times in a row, then put aside.
func TestReadsInARowExactly(t *testing.T) {
	const size = 17
	ping := h2FrameBytes(h2Ping, 0, []byte("12345678"))
	for _, state := range []string{"reading", "h2", "closing"} {
		in := make([]byte, 2*maxReads*size)
		w := readWorker(t, size, state == "h2")
		fds := socketPair(t)
		c := &w.conns[0]
		c.fd, c.up = fds[0], true
		c.fc.reset(fds[0], nil)
		switch state {
		case "h2":
			if len(ping) != size {
				t.Fatalf("a PING frame of %d bytes", len(ping))
			}
			c.fc.readable = true
			c.state = stH2
			c.h2.cl.init(&w.sh.h2req, 1)
			// A SETTINGS frame of 9 bytes and 8 of PING's, then PINGs: 17
			// bytes a read.
			in = append(h2FrameBytes(h2Settings, 0, nil), bytes.Repeat(ping, 2*maxReads)...)[:2*maxReads*size]
		}
		if _, err := syscall.Write(fds[1], in); err != nil {
			t.Fatal(err)
		}
		switch state {
		case "reading":
			c.state = stReading
			c.p.reset(false, false)
			w.read(c, syscall.EPOLLIN, 0)
		case "h2":
			w.h2Read(c, 0)
		default:
			c.state = stClosing
			w.awaitFIN(c, 0)
		}
		left := unread(fds[0], len(in))
		if want := len(in) - maxReads*size; !c.again || len(w.again) != 1 || left != want {
			t.Errorf("%s: put aside %v (%d), %d bytes left unread, want put aside with %d left (%d reads)",
				state, c.again, len(w.again), left, want, maxReads)
		}
	}
}

// TestTLSReadsInARowAreBounded: a TLS response whose records never run
// out is read through crypto/tls exactly maxReads times in a row, then
// put aside, as a plain one is.
func TestTLSReadsInARowAreBounded(t *testing.T) {
	srvCfg, cliCfg := tlsTestConfigs(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	// One write of a head and a 1 MiB body without a length: records of
	// 16 KiB, each read below 17 bytes of.
	resp := append([]byte("HTTP/1.1 200 OK\r\n\r\n"), make([]byte, 1<<20)...)
	serve(t, ln, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
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
		c.Write(resp)
	})
	l := dialLoop(t, ln.Addr().String())

	const size = 17
	w := readWorker(t, size, false)
	c := &w.conns[0]
	c.fd, c.up = l.fd, true
	c.fc.reset(l.fd, l.addr)
	for done := c.tl.handshake(&c.fc, cliCfg); !done; done = c.tl.resume() {
		l.wait(t, &c.fc)
		if _, err := c.fc.flush(); err != nil {
			t.Fatal(err)
		}
	}
	if c.tl.err != nil {
		t.Fatal(c.tl.err)
	}
	t.Cleanup(c.tl.abort)
	if _, err := c.tl.tc.Write([]byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	for len(c.fc.pend) > 0 {
		l.wait(t, &c.fc)
		if _, err := c.fc.flush(); err != nil {
			t.Fatal(err)
		}
	}
	// The first record of the response whole in the socket's buffer.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := rawIoctlInq(l.fd, &n); err != nil {
			t.Fatal(err)
		}
		if n >= 17<<10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of the response arrived in 5 s", n)
		}
		time.Sleep(time.Millisecond)
	}
	c.fc.readable = true
	c.state = stReading
	c.p.reset(false, false)
	w.readTLS(c, 0)
	if want := int64(maxReads * size); !c.again || len(w.again) != 1 || c.rbytes != want {
		t.Errorf("put aside %v (%d) after %d bytes, want put aside after %d (%d reads)", c.again, len(w.again), c.rbytes, want, maxReads)
	}
}

// rawIoctlInq is the number of bytes in fd's receive queue (FIONREAD).
func rawIoctlInq(fd int, n *int) error {
	var v int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&v))); e != 0 {
		return e
	}
	*n = int(v)
	return nil
}

// TestMaxTimeWithoutTheWarmup: --max-time bounds the measured window, the
// warm-up before it not counted: a -n run against a body that never ends,
// with 500 ms of warm-up and --max-time 1s, measures a window of exactly
// 1 s, after the warm-up; and so does a run of -d 1s.
func TestMaxTimeWithoutTheWarmup(t *testing.T) {
	var stopped atomic.Bool
	t.Cleanup(func() { stopped.Store(true) })
	addr, _ := connServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for !stopped.Load() {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
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
		}
	})
	for _, cfg := range []Config{
		{URL: "http://" + addr + "/", Requests: 1, MaxTime: time.Second, Warmup: 500 * time.Millisecond, Timeout: time.Second},
		{URL: "http://" + addr + "/", Connections: 1, Duration: time.Second, Warmup: 500 * time.Millisecond, Timeout: time.Second},
	} {
		start := time.Now()
		r := boundedRun(t, cfg, 5*time.Second, 64<<20)
		if took := time.Since(start); took < 1500*time.Millisecond {
			t.Errorf("-n %d -d %v: run took %v with 500ms of warm-up and a window of 1s", cfg.Requests, cfg.Duration, took)
		}
		if r.Duration != time.Second || r.Warmup != 500*time.Millisecond {
			t.Errorf("-n %d -d %v: window %v after a warm-up of %v, want 1s after 500ms", cfg.Requests, cfg.Duration, r.Duration, r.Warmup)
		}
	}
}
