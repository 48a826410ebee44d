package broker

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestLocalCrowdDoesNotLockOutLocalAgents: a local process keeps more
// silent connections open to the broker than the gate has places, from
// 127.0.0.1, which the cap per address spares; five agents on the same
// host still log in, each at its first or second try, as a newcomer from
// an address holding more than its cap takes the place of one of that
// address's silent connections (on main at 588e3ea 5 of 5 were reset).
func TestLocalCrowdDoesNotLockOutLocalAgents(t *testing.T) {
	listen := testenv.FreeAddr(t)
	startObserved(t, listen, testAccounts(t), Limits{Pending: 16, PerSource: 4, Silent: 30 * time.Second, LoginWait: 30 * time.Second})

	// The crowd: at most 24 open at once (more than the 16 places), each
	// redialled when the broker closes it, 5,000 dials at most.
	stop := make(chan struct{})
	var open atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for dials := 0; dials < 5000; {
			select {
			case <-stop:
				return
			default:
			}
			if open.Load() >= 24 {
				time.Sleep(2 * time.Millisecond)
				continue
			}
			dials++
			c, err := net.Dial("tcp", listen)
			if err != nil {
				time.Sleep(2 * time.Millisecond)
				continue
			}
			open.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer open.Add(-1)
				c.Read(make([]byte, 1)) // until the broker closes it (or the test does)
				c.Close()
			})
		}
	})
	defer func() {
		close(stop)
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	testenv.Until(t, "the crowd holding the gate", func() bool { return open.Load() >= 16 })
	time.Sleep(500 * time.Millisecond) // past unreadGrace: the crowd's places are old

	ok := 0
	for i := range 5 {
		var err error
		for try := 0; try < 2; try++ {
			var d interface{ Disconnect(uint) }
			if d, err = testenv.MQTTClient("tcp://"+listen, "edgebench-lab-pi-1", "pi-1", "one"); err == nil {
				d.Disconnect(0)
				ok++
				break
			}
		}
		if err != nil {
			t.Errorf("local login %d refused while the crowd held the gate: %v", i+1, err)
		}
	}
	if ok != 5 {
		t.Errorf("%d of 5 local logins, want 5 (crowd: %d connections open)", ok, open.Load())
	}
}

// TestOwnCrowdYieldsItsYoungPlaces: the collector's own host fills the
// gate with connections accepted at the same instant as the newcomer's
// (all of them inside unreadGrace, as a crowd that redials keeps them): a
// newcomer from the own host still takes the place of one of them, as
// its address holds more than its cap, while a newcomer from another
// address, whose address holds none, is refused rather than take a young
// place. No clock is raced: every connection carries the same accept
// time.
func TestOwnCrowdYieldsItsYoungPlaces(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lim := Limits{Pending: 4, PerSource: 2}
	lim.fill()
	g := newLoginGate(ln, nil, lim, newRefusals(zap.NewNop(), time.Minute, nil))
	at := time.Now()
	conn := func(t *testing.T, src string) *gatedConn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return &gatedConn{raw: s, gate: g, src: netip.MustParsePrefix(src), accepted: at}
	}
	var crowd []*gatedConn
	for i := range lim.Pending {
		c := conn(t, "127.0.0.1/32")
		if why := g.enter(c); why != "" {
			t.Fatalf("crowd connection %d: %s", i+1, why)
		}
		crowd = append(crowd, c)
	}

	if why := g.enter(conn(t, "192.0.2.7/32")); why == "" {
		t.Errorf("a newcomer from another address took a young place of the own host's crowd")
	}
	if why := g.enter(conn(t, "127.0.0.1/32")); why != "" {
		t.Fatalf("a newcomer from the own host, its crowd's places all young: %s; want one of them taken", why)
	}
	left := 0
	for _, c := range crowd {
		if c.left {
			left++
		}
	}
	if left != 1 || g.n != lim.Pending {
		t.Errorf("%d of the crowd's connections replaced, %d in the gate; want 1 and %d", left, g.n, lim.Pending)
	}
}
