package probe

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/edgebench/edgebench/probe/machine"
)

// The handshakes of a PathRecorder.
const (
	// IdleHandshakes are made before the load, one after the other.
	IdleHandshakes = 5
	// idleBudget bounds them all: a target that drops SYNs does not hold
	// the run back longer.
	idleBudget = 2 * time.Second
	// HandshakeEvery is the pause between two handshakes over the window;
	// the first is made when the window starts.
	HandshakeEvery = 250 * time.Millisecond
	// HandshakeTimeout bounds one handshake; one that takes longer is lost.
	HandshakeTimeout = 2 * time.Second
	// maxPathSamples bounds the handshakes a window keeps: past it every
	// other one is dropped.
	maxPathSamples = 2048
)

// PathRecorder measures the round-trip time to a target by TCP handshakes:
// IdleHandshakes before the load, then one every HandshakeEvery over the
// measured window. Each handshake's time is the kernel's (TCP_INFO's
// tcpi_rtt, taken from the SYN-ACK's timestamp echo, so a retransmitted SYN
// does not count its wait), else the connect's wall time; the connection
// is closed at once, before any request. It owns one goroutine, which Stop
// ends. Its methods are safe for concurrent use.
type PathRecorder struct {
	addr netip.AddrPort

	mu      sync.Mutex
	idle    []float64 // ms
	loaded  []float64 // ms, over the window
	stride  int
	seq     int
	lost    int
	inside  bool // the window is open
	gen     int  // windows opened: a handshake counts in the one it began in
	ended   bool
	summary *machine.PathSummary

	kick   chan struct{}
	cancel context.CancelFunc // ends a handshake in progress, and the goroutine
	done   chan struct{}
	once   sync.Once
}

// RecordPath makes the idle handshakes to addr, then starts the recorder's
// goroutine, which makes the window's once MarkStart opens it. Cancelling
// ctx stops the handshakes; Stop must still be called, and cancels one in
// progress.
func RecordPath(ctx context.Context, addr netip.AddrPort) *PathRecorder {
	ctx, cancel := context.WithCancel(ctx)
	r := &PathRecorder{addr: addr, stride: 1, kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	deadline := time.Now().Add(idleBudget)
	for range IdleHandshakes {
		if ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
		ms, ok := handshake(ctx, addr, min(HandshakeTimeout, time.Until(deadline)))
		if !ok {
			break // refused or silent: no use trying again now
		}
		r.idle = append(r.idle, ms)
	}
	go r.loop(ctx)
	return r
}

func (r *PathRecorder) loop(ctx context.Context) {
	defer close(r.done)
	t := time.NewTimer(HandshakeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		case <-t.C:
		}
		r.mu.Lock()
		inside, gen := r.inside, r.gen
		r.mu.Unlock()
		if inside {
			ms, ok := handshake(ctx, r.addr, HandshakeTimeout)
			if ctx.Err() == nil {
				r.record(gen, ms, ok)
			}
		}
		select { // a kick that came with the tick: this handshake was its
		case <-r.kick:
		default:
		}
		t.Reset(HandshakeEvery)
	}
}

// record keeps a handshake of window gen, unless that window ended
// meanwhile.
func (r *PathRecorder) record(gen int, ms float64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.inside || r.gen != gen {
		return
	}
	if !ok {
		r.lost++
		return
	}
	r.seq++
	if r.seq%r.stride != 0 {
		return
	}
	if len(r.loaded) >= maxPathSamples {
		kept := r.loaded[:0]
		for i := 0; i < len(r.loaded); i += 2 {
			kept = append(kept, r.loaded[i])
		}
		r.loaded = kept
		r.stride *= 2
	}
	r.loaded = append(r.loaded, ms)
}

// MarkStart opens the measured window: a handshake now, then one every
// HandshakeEvery. A second MarkStart starts the window over.
func (r *PathRecorder) MarkStart() {
	r.mu.Lock()
	r.inside, r.ended = true, false
	r.gen++
	r.loaded, r.lost, r.seq, r.stride = r.loaded[:0], 0, 0, 1
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// MarkEnd closes the window: handshakes after it do not count.
func (r *PathRecorder) MarkEnd() {
	r.mu.Lock()
	if r.inside {
		r.inside, r.ended = false, true
	}
	r.mu.Unlock()
}

// Stop ends the handshakes, waits for the goroutine and returns what was
// measured: the idle handshakes, and those of the window when it was
// opened (a window never closed ends now). Later calls return the same.
func (r *PathRecorder) Stop() *machine.PathSummary {
	r.once.Do(func() {
		r.cancel()
		<-r.done
		r.mu.Lock()
		defer r.mu.Unlock()
		s := &machine.PathSummary{Target: r.addr.String(), Idle: rttOf(r.idle)}
		if r.inside || r.ended {
			s.Loaded, s.Lost = rttOf(r.loaded), r.lost
		}
		r.inside = false
		r.summary = s
	})
	return r.summary
}

// rttOf summarises handshake times; nil for none.
func rttOf(ms []float64) *machine.RTT {
	if len(ms) == 0 {
		return nil
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &machine.RTT{N: len(s), MinMS: s[0], MedianMS: med, MaxMS: s[len(s)-1]}
}

// handshake connects to addr and returns the handshake's round-trip time
// in milliseconds; ok is false when it failed or took over timeout.
func handshake(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (float64, bool) {
	if timeout <= 0 {
		return 0, false
	}
	d := net.Dialer{Timeout: timeout}
	start := time.Now()
	c, err := d.DialContext(ctx, "tcp", addr.String())
	wall := time.Since(start)
	if err != nil {
		return 0, false
	}
	defer c.Close()
	var rttUS uint32
	if raw, err := c.(*net.TCPConn).SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) {
			if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
				rttUS = info.Rtt
			}
		})
	}
	if rttUS > 0 {
		return float64(rttUS) / 1000, true
	}
	return float64(wall.Microseconds()) / 1000, true
}
