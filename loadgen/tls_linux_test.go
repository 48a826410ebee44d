//go:build linux

package loadgen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// tlsServerConfig is a server config with the test CA's certificate for
// localhost and 127.0.0.1, and a client config that trusts that CA.
func tlsTestConfigs(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	certs := testenv.WebCertificates(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(certs.Cert, certs.Key)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{Certificates: []tls.Certificate{cert}},
		&tls.Config{RootCAs: pool, ServerName: "localhost", CurvePreferences: tlsGroups}
}

// testLoop is a one-socket event loop, as the engine's, for the tests of
// the TLS layer.
type testLoop struct {
	epfd, fd int
	addr     net.Addr
}

// dialLoop opens a non-blocking socket to addr registered with a loop of
// its own, edge-triggered for both directions as the engine's.
func dialLoop(t *testing.T, addr string) *testLoop {
	t.Helper()
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	l := &testLoop{epfd: epfd, fd: fd, addr: ta}
	t.Cleanup(func() { syscall.Close(fd); syscall.Close(epfd) })
	ev := syscall.EpollEvent{Events: epollFlags, Fd: 0}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		t.Fatal(err)
	}
	sa := &syscall.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	if err := syscall.Connect(fd, sa); err != nil && err != syscall.EINPROGRESS {
		t.Fatal(err)
	}
	return l
}

// wait waits for the socket's next events and notes them in c.
func (l *testLoop) wait(t *testing.T, c *fdConn) {
	t.Helper()
	var evs [4]syscall.EpollEvent
	for {
		n, err := syscall.EpollWait(l.epfd, evs[:], 5000)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("epoll_wait: %d events, %v", n, err)
		}
		for _, ev := range evs[:n] {
			c.edge(ev.Events)
		}
		return
	}
}

// handshake runs a handshake to its end as the engine does: resumed at
// each edge, pend flushed first.
func (l *testLoop) handshake(t *testing.T, tc *tlsConn, cfg *tls.Config) error {
	t.Helper()
	fc := &fdConn{}
	fc.reset(l.fd, l.addr)
	done := tc.handshake(fc, cfg)
	for !done {
		l.wait(t, tc.fc)
		if _, err := tc.fc.flush(); err != nil {
			tc.abort()
			return err
		}
		done = tc.resume()
	}
	return tc.err
}

// roundTrip writes req and reads one response as the engine does: reads
// until errWouldBlock, then waits for the next edge.
func (l *testLoop) roundTrip(t *testing.T, tc *tlsConn, req []byte, p *respParser) (wouldBlocks int) {
	t.Helper()
	p.reset(false, false)
	if _, err := tc.tc.Write(req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for !p.done() {
		for len(tc.fc.pend) > 0 {
			l.wait(t, tc.fc)
			if _, err := tc.fc.flush(); err != nil {
				t.Fatal(err)
			}
		}
		n, err := tc.tc.Read(buf)
		if n > 0 {
			if _, err := p.feed(buf[:n]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err == errWouldBlock {
			wouldBlocks++
			l.wait(t, tc.fc)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return wouldBlocks
}

// trickle is a TCP proxy to a server that passes the server's bytes on 7
// at a time, pausing every 56, so that every TLS record reaches the client
// in pieces, split anywhere.
func trickle(t *testing.T, server string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				return
			}
			c.(*net.TCPConn).SetNoDelay(true)
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(s, c); s.Close() }()
			go func() {
				defer wg.Done()
				defer c.Close()
				b := make([]byte, 7)
				for i := 0; ; i++ {
					n, err := s.Read(b)
					if n > 0 {
						if _, err := c.Write(b[:n]); err != nil {
							return
						}
						if i%8 == 0 {
							time.Sleep(50 * time.Microsecond)
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// tlsHTTPServer serves "HTTP/1.1 200" responses with a 2000-byte body
// over TLS to every request it reads, until the test ends.
func tlsHTTPServer(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp := append([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n"), bytes.Repeat([]byte("x"), 2000)...)
	serve(t, ln, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	})
	return ln.Addr().String()
}

// TestTLSReadsResumeAcrossEdges: records that arrive 7 bytes at a time,
// split everywhere, are read across many would-blocks, as the engine
// reads them, handshake included.
func TestTLSReadsResumeAcrossEdges(t *testing.T) {
	srvCfg, cliCfg := tlsTestConfigs(t)
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cfg := cliCfg.Clone()
		cfg.MinVersion, cfg.MaxVersion = v, v
		l := dialLoop(t, trickle(t, tlsHTTPServer(t, srvCfg)))
		var tc tlsConn
		if err := l.handshake(t, &tc, cfg); err != nil {
			t.Fatal(err)
		}
		if !tc.fc.up || tc.tc.ConnectionState().Version != v {
			t.Fatalf("not up, or version %x", tc.tc.ConnectionState().Version)
		}
		var p respParser
		blocks := 0
		for range 10 {
			blocks += l.roundTrip(t, &tc, []byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"), &p)
			if p.status != 200 || p.body != 2000 {
				t.Fatalf("status %d body %d", p.status, p.body)
			}
		}
		if blocks < 50 {
			t.Errorf("%s: %d would-blocks over 10 responses: the records did not come in pieces", tlsVersionName(v), blocks)
		}
		tc.abort()
	}
}

// TestTLSWriteKeepsWhatTheKernelRefuses: a write larger than the socket
// takes never fails: the rest waits in pend, and flushing it at the
// output edges delivers every byte.
func TestTLSWriteKeepsWhatTheKernelRefuses(t *testing.T) {
	srvCfg, cliCfg := tlsTestConfigs(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	release := make(chan struct{})
	got := make(chan [32]byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- [32]byte{}
			return
		}
		defer c.Close()
		if err := c.(*tls.Conn).Handshake(); err != nil {
			got <- [32]byte{}
			return
		}
		<-release // let the client's socket fill up
		h := sha256.New()
		io.CopyN(h, c, 8<<20)
		got <- [32]byte(h.Sum(nil))
	}()
	l := dialLoop(t, ln.Addr().String())
	var tc tlsConn
	if err := l.handshake(t, &tc, cliCfg); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), (8<<20)/16)
	if n, err := tc.tc.Write(data); n != len(data) || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	if len(tc.fc.pend) == 0 {
		t.Fatal("the kernel took 8 MB at once: nothing was kept for later")
	}
	close(release)
	for len(tc.fc.pend) > 0 {
		l.wait(t, tc.fc)
		if _, err := tc.fc.flush(); err != nil {
			t.Fatal(err)
		}
	}
	if sum := <-got; sum != sha256.Sum256(data) {
		t.Fatal("the server did not receive the bytes written")
	}
	tc.abort()
}

// TestTLSHandshakeAbort: a handshake waiting for a server that never
// answers ends when the loop gives up on it, and leaves no goroutine.
func TestTLSHandshakeAbort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, cliCfg := tlsTestConfigs(t)
	l := dialLoop(t, ln.Addr().String())
	var tc tlsConn
	fc := &fdConn{}
	fc.reset(l.fd, l.addr)
	if tc.handshake(fc, cliCfg) {
		t.Fatalf("the handshake ended without a server: %v", tc.err)
	}
	l.wait(t, tc.fc) // connected
	tc.fc.flush()
	if tc.resume() || !tc.running() || !tc.fc.up {
		t.Fatal("the handshake should wait for the server's answer on an established connection")
	}
	tc.abort()
	if tc.running() || tc.err == nil {
		t.Fatalf("after abort: running %v, err %v", tc.running(), tc.err)
	}
}
