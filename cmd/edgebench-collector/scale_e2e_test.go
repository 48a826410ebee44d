package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// These tests run the fleet scaled out: collector processes of one share
// group behind a real mosquitto, one real PostgreSQL, and devices with the
// real client and spool, which resend what is not acknowledged. Each kills
// or restarts one part during a burst of results and checks that every
// result is stored exactly once, and that no result was acknowledged
// before it was committed.

// scaleFleet is mosquitto, PostgreSQL and collector processes.
type scaleFleet struct {
	t          *testing.T
	bin        string
	mq         string // mosquitto's address
	broker     *proc
	pg         *testenv.Postgres
	db         string
	collectors []*proc
}

func newScaleFleet(t *testing.T, collectors int) *scaleFleet {
	colBin, _ := fleetBinaries(t)
	f := &scaleFleet{t: t, bin: colBin, mq: testenv.FreeAddr(t)}
	f.pg = testenv.StartPostgres(t)
	f.db = f.pg.NewDatabase(t)
	f.broker = mosquittoOn(t, f.mq)
	for i := range collectors {
		f.collectors = append(f.collectors, f.startCollector(i))
	}
	return f
}

// startCollector starts collector i and waits until it has announced
// itself (subscribed).
func (f *scaleFleet) startCollector(i int) *proc {
	f.t.Helper()
	p := startProc(f.t, fmt.Sprintf("collector-%d", i), nil, f.bin, "serve", "--db", f.db, "--broker", "tcp://"+f.mq,
		"--share", "ingest", "--web", testenv.FreeAddr(f.t), "--log-level", "info")
	testenv.Until(f.t, fmt.Sprintf("collector %d to connect", i), func() bool { return strings.Contains(p.out.String(), `"msg":"connected"`) })
	return p
}

// devices dials n devices of fleet lab with a spool each.
func (f *scaleFleet) devices(n int) []*transport.Client {
	f.t.Helper()
	var ds []*transport.Client
	for i := range n {
		id := fmt.Sprintf("pi-%03d", i)
		sp, err := spool.Open(filepath.Join(f.t.TempDir(), id), spool.Limits{})
		if err != nil {
			f.t.Fatal(err)
		}
		c, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + f.mq, Fleet: "lab", Device: id,
			RetryInterval: 200 * time.Millisecond, MaxRetryWait: time.Second},
			transport.Options{Spool: sp, Birth: &wire.Status{BootID: "boot-" + id}})
		if err != nil {
			f.t.Fatal(err)
		}
		f.t.Cleanup(func() { c.Close() })
		ds = append(ds, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range ds {
		if err := c.WaitConnected(ctx); err != nil {
			f.t.Fatal(err)
		}
	}
	return ds
}

// burst has each device publish per results, one every pace, and wait
// for their acks. It returns at once; acked counts the acks as they come,
// ackedAt keeps them with their time, and wait waits for the last one
// (failing the test after limit).
type burst struct {
	total   int
	acked   atomic.Int64
	mu      sync.Mutex
	sent    map[string]bool // published (spooled)
	ackedAt map[string]time.Time
	lastAck time.Time
	errs    chan error
	done    chan struct{}
}

func (f *scaleFleet) burst(ds []*transport.Client, per int, pace, limit time.Duration) *burst {
	b := &burst{total: len(ds) * per, sent: map[string]bool{}, ackedAt: map[string]time.Time{}, errs: make(chan error, len(ds)*per), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	f.t.Cleanup(cancel)
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() {
			for j := range per {
				r := fakeWire("lab", d.Config().Device, "nginx", 1000+float64(i), 800, "")
				r.CreatedAt = time.Now().Add(time.Duration(j) * time.Millisecond)
				if err := d.PublishResult(ctx, r); err != nil {
					b.errs <- err
					return
				}
				b.mu.Lock()
				b.sent[r.ID] = true
				b.mu.Unlock()
				wg.Go(func() {
					if err := d.WaitAck(ctx, r.ID); err != nil {
						b.errs <- fmt.Errorf("%s: %w", d.Config().Device, err)
						return
					}
					b.acked.Add(1)
					b.mu.Lock()
					b.ackedAt[r.ID] = time.Now()
					b.lastAck = time.Now()
					b.mu.Unlock()
				})
				time.Sleep(pace)
			}
		})
	}
	go func() { wg.Wait(); close(b.done) }()
	return b
}

// unacked are the results published and not yet acknowledged.
func (b *burst) unacked() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]bool{}
	for id := range b.sent {
		if _, ok := b.ackedAt[id]; !ok {
			out[id] = true
		}
	}
	return out
}

// recovered is the time by which all of ids were acked, after wait.
func (b *burst) recovered(ids map[string]bool) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	var last time.Time
	for id := range ids {
		if at := b.ackedAt[id]; at.After(last) {
			last = at
		}
	}
	return last
}

// ackedBy are the results acknowledged so far.
func (b *burst) ackedBy() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]bool, len(b.ackedAt))
	for id := range b.ackedAt {
		out[id] = true
	}
	return out
}

func (b *burst) wait(t *testing.T) time.Time {
	t.Helper()
	<-b.done
	select {
	case err := <-b.errs:
		t.Fatalf("%d of %d results acked: %v", b.acked.Load(), b.total, err)
	default:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastAck
}

// waitAcked waits until n results are acked.
func (b *burst) waitAcked(t *testing.T, n int64) {
	t.Helper()
	testenv.Until(t, fmt.Sprintf("%d acks", n), func() bool { return b.acked.Load() >= n })
}

// checkStore checks that the store holds every result of the burst once,
// with its run, and the results in want.
func (f *scaleFleet) checkStore(b *burst, want map[string]bool) {
	f.t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, f.db)
	if err != nil {
		f.t.Fatal(err)
	}
	defer s.Close()
	nres, nruns, err := s.CountResults(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if nres != int64(b.total) || nruns != int64(b.total) {
		f.t.Errorf("store: %d results, %d runs; want %d each (lost or doubled)", nres, nruns, b.total)
	}
	for id := range want {
		if _, err := s.Result(ctx, id); err != nil {
			f.t.Errorf("result %s was acked and is not stored: %v", id, err)
		}
	}
}

// TestKillCollectorDuringBurst: of two collectors, one is killed (SIGKILL)
// while 40 devices publish 50 results each, 20 a second. The other
// announces itself again, the devices resend what the dead one took
// without acking it, and every result is stored exactly once. The time
// from the kill until every result in flight at it is acknowledged (so
// stored) is the recovery.
func TestKillCollectorDuringBurst(t *testing.T) {
	f := newScaleFleet(t, 2)
	ds := f.devices(40)
	b := f.burst(ds, 50, 50*time.Millisecond, 3*time.Minute)
	b.waitAcked(t, 300)
	// The kill comes while results are in flight, so that the figure
	// measures a recovery.
	var pending map[string]bool
	testenv.Until(t, "results in flight", func() bool { pending = b.unacked(); return len(pending) > 0 })
	killed, atKill := time.Now(), b.acked.Load()
	f.collectors[0].kill()
	last := b.wait(t)
	t.Logf("killed one collector after %d of %d acks: the %d results sent and not acked then were all acked %v later; the last ack came %v later",
		atKill, b.total, len(pending), b.recovered(pending).Sub(killed).Round(time.Millisecond), last.Sub(killed).Round(time.Millisecond))
	f.checkStore(b, nil)
	if out := f.collectors[1].out.String(); !strings.Contains(out, "another collector left: announcing this one again") {
		t.Errorf("the other collector did not announce itself again:\n%s", out)
	}
}

// TestPostgresRestartDuringIngest: PostgreSQL stops as in a crash (pg_ctl
// -m immediate) while two collectors ingest a burst, and starts again 3 s
// later. The collectors hold what comes in meanwhile and store it when the
// database is back; every result acknowledged before the crash is in the
// database after it, and every result is stored exactly once.
func TestPostgresRestartDuringIngest(t *testing.T) {
	f := newScaleFleet(t, 2)
	ds := f.devices(40)
	b := f.burst(ds, 50, 50*time.Millisecond, 3*time.Minute)
	b.waitAcked(t, 300)
	if err := f.pg.Stop("immediate"); err != nil {
		t.Fatal(err)
	}
	before, pending := b.ackedBy(), b.unacked()
	time.Sleep(3 * time.Second)
	if err := f.pg.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	last := b.wait(t)
	t.Logf("%d of %d results acked at the crash; the %d sent and not acked then were all acked %v after the restart, the last %v after",
		len(before), b.total, len(pending), b.recovered(pending).Sub(started).Round(time.Millisecond), last.Sub(started).Round(time.Millisecond))
	f.checkStore(b, before)
	for i, c := range f.collectors {
		if out := c.out.String(); !strings.Contains(out, "store unavailable") || !strings.Contains(out, "store available again") {
			t.Errorf("collector %d did not say the store went and came back:\n%s", i, out)
		}
	}
}

// TestMosquittoRestartDuringIngest: mosquitto (without persistence) is
// killed during a burst and started again on its port: the collectors and
// the devices reconnect and resubscribe, the devices resend what was not
// acknowledged, and every result is stored exactly once.
func TestMosquittoRestartDuringIngest(t *testing.T) {
	f := newScaleFleet(t, 2)
	ds := f.devices(40)
	b := f.burst(ds, 50, 50*time.Millisecond, 3*time.Minute)
	b.waitAcked(t, 300)
	f.broker.kill()
	time.Sleep(time.Second)
	pending := b.unacked() // what waits for the broker (acks that came in before the kill are counted by now)
	f.broker = mosquittoOn(t, f.mq)
	started := time.Now()
	last := b.wait(t)
	t.Logf("the %d results sent and not acked while mosquitto was down were all acked %v after its restart, the last %v after",
		len(pending), b.recovered(pending).Sub(started).Round(time.Millisecond), last.Sub(started).Round(time.Millisecond))
	f.checkStore(b, nil)
	// The new mosquitto's cleanup runs before the devices': close them
	// while it is up, or each waits for a broker that is gone.
	for _, d := range ds {
		d.Close()
	}
}
