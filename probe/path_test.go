package probe

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// A listener on loopback that counts the connections it accepts and
// closes them: the handshakes a PathRecorder makes.
func countingListener(t *testing.T) (netip.AddrPort, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return netip.MustParseAddrPort(l.Addr().String()), &n
}

// The idle handshakes come before the window, the window's every
// HandshakeEvery from its start; each time is the kernel's, a few
// microseconds on loopback and never zero or above a second.
func TestPathRecorder(t *testing.T) {
	addr, accepted := countingListener(t)
	r := RecordPath(context.Background(), addr)
	time.Sleep(2 * HandshakeEvery)                     // before the window: not counted
	if got := accepted.Load(); got != IdleHandshakes { // the listener accepts after the handshakes end
		t.Errorf("%d idle handshakes accepted, want %d", got, IdleHandshakes)
	}
	r.MarkStart()
	time.Sleep(3*HandshakeEvery + HandshakeEvery/2)
	r.MarkEnd()
	time.Sleep(2 * HandshakeEvery) // after it: not counted either
	s := r.Stop()
	if s.Target != addr.String() || s.Idle == nil || s.Idle.N != IdleHandshakes || s.Lost != 0 {
		t.Fatalf("path %+v idle %+v", s, s.Idle)
	}
	// The first at MarkStart, then one every HandshakeEvery: 4 in 3.5
	// periods, fewer on a busy machine, never more.
	if s.Loaded == nil || s.Loaded.N < 2 || s.Loaded.N > 4 {
		t.Fatalf("loaded %+v", s.Loaded)
	}
	for _, rtt := range []*machine.RTT{s.Idle, s.Loaded} {
		if rtt.MinMS <= 0 || rtt.MinMS > rtt.MedianMS || rtt.MedianMS > rtt.MaxMS || rtt.MaxMS > 1000 {
			t.Errorf("rtt %+v", *rtt)
		}
	}
	if again := r.Stop(); again != s {
		t.Error("a second Stop measured again")
	}
}

// A target that refuses connections: no idle figure, no time lost on
// retries; the window's handshakes are counted lost.
func TestPathRecorderRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddrPort(l.Addr().String())
	l.Close()
	start := time.Now()
	r := RecordPath(context.Background(), addr)
	if d := time.Since(start); d > time.Second {
		t.Errorf("idle handshakes to a refusing port took %v", d)
	}
	r.MarkStart()
	time.Sleep(HandshakeEvery + HandshakeEvery/2)
	s := r.Stop() // a window never closed ends at Stop
	if s.Idle != nil || s.Loaded != nil || s.Lost < 1 {
		t.Errorf("refused: %+v", s)
	}
}

// Without a window, only the idle figure; a window opened again starts
// over.
func TestPathRecorderWindows(t *testing.T) {
	addr, _ := countingListener(t)
	r := RecordPath(context.Background(), addr)
	r.MarkStart()
	time.Sleep(HandshakeEvery / 2)
	r.MarkStart()
	r.MarkEnd()
	if s := r.Stop(); s.Loaded != nil && s.Loaded.N > 1 {
		t.Errorf("window started over: %+v", s.Loaded)
	}
	r = RecordPath(context.Background(), addr)
	if s := r.Stop(); s.Idle == nil || s.Loaded != nil {
		t.Errorf("no window: %+v", s)
	}
}

func TestRTTOf(t *testing.T) {
	if rttOf(nil) != nil {
		t.Error("no handshakes gave a figure")
	}
	if got := *rttOf([]float64{3, 1, 2}); got != (machine.RTT{N: 3, MinMS: 1, MedianMS: 2, MaxMS: 3}) {
		t.Errorf("odd: %+v", got)
	}
	if got := *rttOf([]float64{4, 1, 2, 3}); got != (machine.RTT{N: 4, MinMS: 1, MedianMS: 2.5, MaxMS: 4}) {
		t.Errorf("even: %+v", got)
	}
}
