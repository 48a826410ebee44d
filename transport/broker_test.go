package transport

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/wire"
)

// gate is a loopback TCP relay in front of a broker. cut drops every
// relayed connection without a DISCONNECT, as a network failure would (the
// broker publishes the client's will), and turns new connections away
// until open is called.
type gate struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	closed bool
	conns  []net.Conn
}

func newGate(t testing.TB, target string) *gate {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{l: l, target: target}
	t.Cleanup(func() { l.Close(); g.cut() })
	go g.serve()
	return g
}

func (g *gate) url() string { return "tcp://" + g.l.Addr().String() }

func (g *gate) serve() {
	for {
		c, err := g.l.Accept()
		if err != nil {
			return
		}
		g.mu.Lock()
		closed := g.closed
		g.mu.Unlock()
		if closed {
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", g.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		g.mu.Lock()
		g.conns = append(g.conns, c, up)
		g.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

// cut closes the relayed connections and refuses new ones; it reports
// whether there was one.
func (g *gate) cut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	for _, c := range g.conns {
		c.Close()
	}
	n := len(g.conns)
	g.conns = nil
	return n > 0
}

func (g *gate) open() {
	g.mu.Lock()
	g.closed = false
	g.mu.Unlock()
}

// fastConfig is a config with short retry intervals for tests.
func fastConfig(broker, fleet, device, clientID string) ClientConfig {
	return ClientConfig{Broker: broker, Fleet: fleet, Device: device, ClientID: clientID,
		KeepAlive: 5 * time.Second, ConnectTimeout: 5 * time.Second,
		RetryInterval: 100 * time.Millisecond, MaxRetryWait: 200 * time.Millisecond}
}

func testLog(t testing.TB) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
}

func dial(t testing.TB, cfg ClientConfig, opts Options) *Client {
	t.Helper()
	if opts.Log == nil {
		opts.Log = testLog(t)
	}
	c, err := Dial(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// store is a collector's idempotent store: results by id, with the number
// of deliveries.
type store struct {
	mu         sync.Mutex
	results    map[string]*wire.Result
	deliveries map[string]int
	fail       func(*wire.Result) error // optional: fail a delivery
}

func newStore() *store {
	return &store{results: map[string]*wire.Result{}, deliveries: map[string]int{}}
}

func (s *store) handle(ctx context.Context, from wire.Addr, r *wire.Result, _ []byte) error {
	s.mu.Lock()
	s.deliveries[r.ID]++
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		if err := fail(r); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.results[r.ID] = r
	s.mu.Unlock()
	return nil
}

func (s *store) count() (stored int, deliveries map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := map[string]int{}
	for k, v := range s.deliveries {
		d[k] = v
	}
	return len(s.results), d
}

func ctx10(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// smallResult is a result small enough to make many of.
func smallResult() *wire.Result {
	return &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), CreatedAt: time.Now().UTC(), Kind: wire.KindLoadTest,
		Outcome: wire.StateSucceeded, Spec: wire.RunSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 1},
		Runs: []wire.Run{{Completed: 10, OK: 10, Timeline: []wire.Second{{T: 0, Completed: 10}}}}}
}

// collector dials a collector client with a result subscriber, which
// announces itself to the devices as the collector's does.
func collector(t testing.TB, broker string, st *store, group string) (*Client, *Subscriber) {
	t.Helper()
	c := dial(t, fastConfig(broker, "", "", "collector-"+wire.NewID()), Options{Workers: 2, AnnounceCollector: true})
	sub, err := NewSubscriber(c, SubscriberConfig{Group: group, Handler: st.handle})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	return c, sub
}

// device dials a device client with a spool in dir.
func device(t testing.TB, broker, dir string, opts Options) (*Client, *spool.Spool) {
	t.Helper()
	sp, err := spool.Open(dir, spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Spool = sp
	return dial(t, fastConfig(broker, "lab", "pi4-07", ""), opts), sp
}
