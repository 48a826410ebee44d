package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// The embedded broker's limits on packets, whoever sends them.
const (
	// maxPacket is the largest MQTT packet the broker reads: a payload at
	// the decoders' cap with room for the topic and headers. A client
	// that announces a larger one is disconnected before anything is
	// allocated for it.
	maxPacket = transport.MaxPacketSize // the devices' clients have the same
	// maxConnect is the largest CONNECT: client id, user name, password
	// and Will. A device's is under 1 KiB.
	maxConnect = 16 << 10
)

// Limits bound what clients that have not logged in yet may cost. Zero
// values take the defaults.
type Limits struct {
	LoginWait time.Duration // from accept to CONNECT read, TLS handshake included; default 10 s
	Silent    time.Duration // from accept to the first byte; default 2 s
	Pending   int           // connections not logged in at once; default 64
	PerSource int           // of them from one address (IPv6: one /64); default 8
	LogEvery  time.Duration // refusals of one user and reason are logged once per LogEvery, then counted; default 1 min
	Logins    LoginLimits   // password checks and failed logins
}

func (l *Limits) fill() {
	if l.LoginWait <= 0 {
		l.LoginWait = 10 * time.Second
	}
	if l.Silent <= 0 {
		l.Silent = 2 * time.Second
	}
	if l.Pending <= 0 {
		l.Pending = 64
	}
	if l.PerSource <= 0 {
		l.PerSource = 8
	}
	if l.LogEvery <= 0 {
		l.LogEvery = time.Minute
	}
	l.Logins.fill()
}

// loginGate is the broker's listener: a connection must send its first
// byte within lim.Silent and its CONNECT within lim.LoginWait, and may
// announce at most maxConnect bytes for it. At most lim.Pending
// connections wait for their login at once, at most lim.PerSource of
// them from one address (but 127.0.0.1 and ::1: ownHost): past that one,
// a new connection is closed at once. When the gate is full, a new connection takes the place of one
// that has not sent its whole CONNECT yet from an address that holds more
// places than the new connection's (victimLocked): a device that keeps
// retrying gets in, however many addresses crowd the gate; from the
// collector's own host, past its cap per address, it may take the place
// of its own address's silent ones. A connection leaves the gate when it logs in
// (loggedIn) or closes.
type loginGate struct {
	net.Listener
	tls     *tls.Config // nil: plain TCP
	lim     Limits
	refused *refusals

	mu      sync.Mutex
	pending map[netip.Prefix][]*gatedConn // by source, oldest first
	n       int                           // connections in the gate
	closing bool                          // drain began: no connection enters

	// unsettled counts the connections handed to mochi that have neither
	// logged in nor been closed by mochi's handler (drain waits for them).
	unsettled sync.WaitGroup
}

func newLoginGate(ln net.Listener, tlsCfg *tls.Config, lim Limits, refused *refusals) *loginGate {
	return &loginGate{Listener: ln, tls: tlsCfg, lim: lim, refused: refused, pending: map[netip.Prefix][]*gatedConn{}}
}

// Accept returns the next connection admitted to the gate. It retries
// after temporary errors (too many open files): mochi stops listening for
// good when Accept fails.
func (g *loginGate) Accept() (net.Conn, error) {
	var wait time.Duration
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			g.refused.note("", "", "", "accept failed, retrying", zap.Error(err))
			time.Sleep(wait)
			continue
		}
		wait = 0
		now := time.Now()
		gc := &gatedConn{raw: c, gate: g, src: sourceOf(c.RemoteAddr().String()), accepted: now}
		if why := g.enter(gc); why != "" {
			g.refused.note("", "", c.RemoteAddr().String(), why)
			c.Close()
			continue
		}
		c.SetDeadline(now.Add(min(g.lim.Silent, g.lim.LoginWait)))
		gc.Conn = &firstByte{Conn: c, gc: gc}
		if g.tls != nil {
			gc.Conn = tls.Server(gc.Conn, g.tls)
		}
		return gc, nil
	}
}

// enter takes c into the gate, making room if need be: "" when it is in,
// else why it is not.
func (g *loginGate) enter(c *gatedConn) string {
	g.mu.Lock()
	mine := len(g.pending[c.src])
	if mine >= g.lim.PerSource && !ownHost(c.src) {
		g.mu.Unlock()
		return fmt.Sprintf("connection closed: %d others from this address have not logged in yet", mine)
	}
	var victim *gatedConn
	if g.n >= g.lim.Pending {
		victim = g.victimLocked(c.src, mine, c.accepted)
		if victim == nil {
			g.mu.Unlock()
			return fmt.Sprintf("connection closed: %d others have not logged in yet", g.lim.Pending)
		}
		g.leaveLocked(victim)
	}
	if g.closing {
		g.mu.Unlock()
		return "connection closed: the broker is stopping"
	}
	g.pending[c.src] = append(g.pending[c.src], c)
	g.n++
	g.unsettled.Add(1)
	g.mu.Unlock()
	if victim != nil {
		g.refused.note("", "", victim.raw.RemoteAddr().String(), "connection closed: the gate is full and its address holds the most places")
		victim.raw.Close()
	}
	return ""
}

// unreadGrace is how long a connection nothing has been read from yet is
// safe from being replaced: a device's CONNECT may be waiting for the
// broker to read it.
const unreadGrace = 250 * time.Millisecond

// victimLocked is the connection a newcomer from src, whose address
// holds mine places, takes the place of, among those that have not sent
// their whole CONNECT from an address that holds more places than mine,
// or from its own address when that holds more than lim.PerSource (the
// collector's own host, which the cap per address spares: a local
// process holding every place with silent connections crowded out the
// local agents, 5 of 5 logins reset): one that has sent part of it
// before one nothing has been read from yet (and the latter only past
// unreadGrace, but in the own address's crowd, which could keep every
// place young by redialling); then from the address with the most
// places; then the oldest. nil when there is none.
func (g *loginGate) victimLocked(src netip.Prefix, mine int, now time.Time) *gatedConn {
	var victim *gatedConn
	var vTier, vCount int
	for from, cs := range g.pending {
		crowd := from == src && len(cs) > g.lim.PerSource
		if len(cs) <= mine && !crowd {
			continue
		}
		for _, c := range cs {
			if c.sentConnect.Load() {
				continue
			}
			tier := 2
			if !c.readSome.Load() {
				if now.Sub(c.accepted) < unreadGrace && !crowd {
					continue
				}
				tier = 1
			}
			if victim == nil || tier > vTier || (tier == vTier && (len(cs) > vCount ||
				(len(cs) == vCount && c.accepted.Before(victim.accepted)))) {
				victim, vTier, vCount = c, tier, len(cs)
			}
		}
	}
	return victim
}

// ownHost reports whether src is the collector's own host as clients on
// it dial it: 127.0.0.1 or ::1. The cap per address does not apply
// there: the collector's own client, a local bridge and the benchmarks'
// simulated fleets come from there (the cap of the whole gate and the
// places taken when it is full do).
func ownHost(src netip.Prefix) bool {
	a := src.Addr()
	return a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || (a.Is6() && src.Contains(netip.IPv6Loopback()))
}

// leaveLocked takes c out of the gate, once.
func (g *loginGate) leaveLocked(c *gatedConn) {
	if c.left {
		return
	}
	c.left = true
	cs := g.pending[c.src]
	if i := slices.Index(cs, c); i >= 0 {
		cs = slices.Delete(cs, i, i+1)
	}
	if len(cs) == 0 {
		delete(g.pending, c.src)
	} else {
		g.pending[c.src] = cs
	}
	g.n--
}

// gatedConn is a connection in the gate until it logs in.
type gatedConn struct {
	net.Conn             // raw, or TLS over it
	raw         net.Conn // the TCP connection
	gate        *loginGate
	src         netip.Prefix
	accepted    time.Time
	in          atomic.Bool // logged in: out of the gate
	sentConnect atomic.Bool // its whole CONNECT has come
	readSome    atomic.Bool // a byte of it has been read
	silent      atomic.Bool // closed for sending nothing
	left        bool        // out of the gate; under gate.mu
	hdr         connectHeader
	settled     sync.Once // gate.unsettled done: logged in, or closed by its handler
}

// firstByte gives a connection its time for the login once its first
// byte comes, TLS handshake included.
type firstByte struct {
	net.Conn
	gc   *gatedConn
	sent bool
}

func (f *firstByte) Read(p []byte) (int, error) {
	n, err := f.Conn.Read(p)
	if n > 0 && !f.sent {
		f.sent = true
		f.gc.readSome.Store(true)
		if !f.gc.in.Load() {
			f.Conn.SetDeadline(f.gc.accepted.Add(f.gc.gate.lim.LoginWait))
		}
	}
	var ne net.Error
	if !f.sent && !f.gc.in.Load() && errors.As(err, &ne) && ne.Timeout() {
		f.gc.gate.refused.note("", "", f.RemoteAddr().String(), fmt.Sprintf("connection closed: nothing sent within %s", f.gc.gate.lim.Silent))
		f.gc.silent.Store(true)
	}
	return n, err
}

// Read checks, until the login, the size the CONNECT announces, and
// notes a CONNECT that did not come in time.
func (c *gatedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.in.Load() {
		return n, err
	}
	if herr := c.hdr.feed(p[:n]); herr != nil {
		c.gate.refused.note("", "", c.RemoteAddr().String(), herr.Error())
		return 0, herr
	}
	if c.hdr.complete() {
		c.sentConnect.Store(true)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !c.silent.Load() {
		c.gate.refused.note("", "", c.RemoteAddr().String(), fmt.Sprintf("connection closed: no login within %s", c.gate.lim.LoginWait))
	}
	return n, err
}

// Close closes the connection and leaves the gate.
func (c *gatedConn) Close() error {
	c.leave()
	err := c.Conn.Close()
	c.settle()
	return err
}

func (c *gatedConn) settle() { c.settled.Do(c.gate.unsettled.Done) }

// drain stops the gate before the broker stops: no connection enters,
// those that have not logged in are closed, and it waits, up to wait,
// until mochi's handler of each has closed it. A connection that never
// logged in leaves mochi without taking any of its locks, so mochi's
// Close would otherwise race with its handler's start (the race detector
// saw it when a test stopped the broker as the gate closed one).
func (g *loginGate) drain(wait time.Duration) {
	g.mu.Lock()
	g.closing = true
	for _, cs := range g.pending {
		for _, c := range cs {
			c.raw.Close()
		}
	}
	g.mu.Unlock()
	done := make(chan struct{})
	go func() { g.unsettled.Wait(); close(done) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

func (c *gatedConn) leave() {
	c.gate.mu.Lock()
	c.gate.leaveLocked(c)
	c.gate.mu.Unlock()
}

// loggedIn takes a connection that has logged in out of the gate.
func loggedIn(c net.Conn) {
	if g, ok := c.(*gatedConn); ok {
		g.in.Store(true)
		g.leave()
		g.settle()
	}
}

// connectHeader follows the fixed header of a connection's first packet
// as its bytes arrive: a type byte, then the remaining length in 1 to 4
// bytes of 7 bits, least significant first; then counts the packet's
// bytes.
type connectHeader struct {
	n    int // header bytes seen
	size int // remaining length so far
	done bool
	body int // bytes of the packet after the header seen
}

// complete reports whether the whole first packet has come.
func (h *connectHeader) complete() bool { return h.done && h.body >= h.size }

var errConnectTooLarge = fmt.Errorf("connection closed: CONNECT larger than %d bytes", maxConnect)

func (h *connectHeader) feed(b []byte) error {
	for i, x := range b {
		if h.done {
			h.body += len(b) - i
			return nil
		}
		h.n++
		if h.n == 1 { // the packet type: mochi refuses anything but CONNECT
			continue
		}
		h.size |= int(x&0x7f) << (7 * (h.n - 2))
		if h.size > maxConnect {
			return errConnectTooLarge
		}
		h.done = x&0x80 == 0 || h.n == 5 // mochi refuses a fifth length byte
	}
	return nil
}

// refusals logs refused logins and connections so that a hostile client
// cannot flood the log: the first refusal of a user name for a reason in
// each logEvery is logged with its client id and address, the next ones
// are counted and logged as one line when the period ends. Past maxKeys
// users and reasons in a period, refusals are only counted.
type refusals struct {
	log   *zap.Logger
	every time.Duration
	count *atomic.Int64 // every refusal; nil: not counted

	mu     sync.Mutex
	counts map[refusalKey]int // refusals after the first, this period
	other  int                // refusals past maxKeys
	timer  *time.Timer        // ends the period; nil between periods
	closed bool
}

type refusalKey struct{ user, reason string }

const maxRefusalKeys = 64

func newRefusals(log *zap.Logger, every time.Duration, count *atomic.Int64) *refusals {
	return &refusals{log: log, every: every, count: count, counts: map[refusalKey]int{}}
}

// note records one refusal: of the login of user with client id on remote
// (any of them "" when not known yet), for reason.
func (r *refusals) note(clientID, user, remote, reason string, fields ...zap.Field) {
	if r.count != nil {
		r.count.Add(1)
	}
	user = wire.Clip(user)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.timer == nil {
		r.timer = time.AfterFunc(r.every, r.flush)
	}
	k := refusalKey{user, reason}
	if n, ok := r.counts[k]; ok {
		r.counts[k] = n + 1
		return
	}
	if len(r.counts) >= maxRefusalKeys {
		r.other++
		return
	}
	r.counts[k] = 0
	r.log.Warn("broker refused a client", append([]zap.Field{zap.String("reason", reason), zap.String("user", user),
		zap.String("client_id", wire.Clip(clientID)), zap.String("remote", remote)}, fields...)...)
}

// flush ends a period: one line per user and reason refused again.
func (r *refusals) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.flushLocked()
	}
}

func (r *refusals) flushLocked() {
	for k, n := range r.counts {
		if n > 0 {
			r.log.Warn("broker refused a client again", zap.String("reason", k.reason), zap.String("user", k.user),
				zap.Int("times", n), zap.Duration("within", r.every))
		}
	}
	if r.other > 0 {
		r.log.Warn("broker refused more clients, too many users and reasons to list", zap.Int("times", r.other),
			zap.Duration("within", r.every))
	}
	clear(r.counts)
	r.other = 0
	r.timer = nil
}

// stop logs what is counted and stops logging.
func (r *refusals) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.flushLocked()
}
