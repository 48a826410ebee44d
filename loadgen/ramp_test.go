//go:build linux

package loadgen

import (
	"bufio"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRampKeepsTheBacklogSpare is issue 28's item 5 at the socket: ab
// -c5000 -k opened its 5000 connections at once, and the SYNs that
// found the server's listen backlog full were sent again 1 s and 3 s
// later. A server that answers a connection's first request after 20 ms
// counts the connections it holds unanswered: never more than rampMax, the
// smallest backlog in common use. Every connection is still opened, and
// none sends a second request before the last is opened, as ab does:
// -n 600 over 300 connections, not over the first ones.
func TestRampKeepsTheBacklogSpare(t *testing.T) {
	var unanswered, peak atomic.Int64
	var mu sync.Mutex
	perConn := map[string]int{}
	addr, _ := connServer(t, func(c net.Conn) {
		unanswered.Add(1)
		for {
			p := unanswered.Load()
			if p <= peak.Load() || peak.CompareAndSwap(peak.Load(), p) {
				break
			}
		}
		br := bufio.NewReader(c)
		first := true
		for {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					if first {
						unanswered.Add(-1)
					}
					return
				}
				if line == "\r\n" {
					break
				}
			}
			mu.Lock()
			perConn[c.RemoteAddr().String()]++
			mu.Unlock()
			if first {
				// Accepting is slow, answering fast: a connection
				// answered once could take every request left.
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
			if first {
				first = false
				unanswered.Add(-1)
			}
		}
	})
	r := run(t, Config{URL: "http://" + addr + "/", Connections: 300, Threads: 1, Requests: 600, KeepAlive: true})
	if r.OK != 600 || r.Connects != 300 {
		t.Errorf("ok %d, %d connections opened: want 600 over 300", r.OK, r.Connects)
	}
	// The server counts a connection answered once its write returned,
	// after the client may have read it and opened the next: a few over.
	if p := peak.Load(); p > rampMax+rampMax/8 || p < rampMax/2 {
		t.Errorf("the server held %d connections unanswered at once: want at most %d (and the ramp used)", p, rampMax)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(perConn) != 300 {
		t.Errorf("%d connections carried requests: want all 300, none running ahead of the ramp", len(perConn))
	}
}
