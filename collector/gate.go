package collector

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
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

// brokerLimits bound what clients that have not logged in yet may cost.
type brokerLimits struct {
	loginWait time.Duration // from accept to CONNECT read, TLS handshake included; default 10 s
	pending   int           // connections not logged in at once; more are closed at once; default 64
	logEvery  time.Duration // refusals of one user and reason are logged once per logEvery, then counted; default 1 min
}

func (l *brokerLimits) fill() {
	if l.loginWait <= 0 {
		l.loginWait = 10 * time.Second
	}
	if l.pending <= 0 {
		l.pending = 64
	}
	if l.logEvery <= 0 {
		l.logEvery = time.Minute
	}
}

// loginGate is the broker's listener: a connection must send its CONNECT
// within loginWait and may announce at most maxConnect bytes for it, and
// at most lim.pending connections wait for their login at once; the
// others are closed as soon as they are accepted. A connection leaves the
// gate when it logs in (loggedIn) or closes.
type loginGate struct {
	net.Listener
	tls     *tls.Config // nil: plain TCP
	lim     brokerLimits
	pending chan struct{} // one per connection in the gate
	refused *refusals
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
		select {
		case g.pending <- struct{}{}:
		default:
			g.refused.note("", "", c.RemoteAddr().String(), fmt.Sprintf("connection closed: %d others have not logged in yet", g.lim.pending))
			c.Close()
			continue
		}
		c.SetDeadline(time.Now().Add(g.lim.loginWait))
		if g.tls != nil {
			c = tls.Server(c, g.tls)
		}
		return &gatedConn{Conn: c, gate: g}, nil
	}
}

// gatedConn is a connection in the gate until it logs in.
type gatedConn struct {
	net.Conn
	gate *loginGate
	in   atomic.Bool // logged in: out of the gate
	once sync.Once   // gives the gate's place back
	hdr  connectHeader
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
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.gate.refused.note("", "", c.RemoteAddr().String(), fmt.Sprintf("connection closed: no login within %s", c.gate.lim.loginWait))
	}
	return n, err
}

// Close closes the connection and leaves the gate.
func (c *gatedConn) Close() error {
	c.leave()
	return c.Conn.Close()
}

func (c *gatedConn) leave() {
	c.once.Do(func() { <-c.gate.pending })
}

// loggedIn takes a connection that has logged in out of the gate.
func loggedIn(c net.Conn) {
	if g, ok := c.(*gatedConn); ok {
		g.in.Store(true)
		g.leave()
	}
}

// connectHeader follows the fixed header of a connection's first packet
// as its bytes arrive: a type byte, then the remaining length in 1 to 4
// bytes of 7 bits, least significant first.
type connectHeader struct {
	n    int // header bytes seen
	size int // remaining length so far
	done bool
}

var errConnectTooLarge = fmt.Errorf("connection closed: CONNECT larger than %d bytes", maxConnect)

func (h *connectHeader) feed(b []byte) error {
	for _, x := range b {
		if h.done {
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

	mu     sync.Mutex
	counts map[refusalKey]int // refusals after the first, this period
	other  int                // refusals past maxKeys
	timer  *time.Timer        // ends the period; nil between periods
	closed bool
}

type refusalKey struct{ user, reason string }

const maxRefusalKeys = 64

func newRefusals(log *zap.Logger, every time.Duration) *refusals {
	return &refusals{log: log, every: every, counts: map[refusalKey]int{}}
}

// note records one refusal: of the login of user with client id on remote
// (any of them "" when not known yet), for reason.
func (r *refusals) note(clientID, user, remote, reason string, fields ...zap.Field) {
	refusedTotal.Add(1)
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
