package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// startObserved starts a collector whose log the test reads; it is
// closed when the test ends.
func startObserved(t *testing.T, cfg Config) (*Collector, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Log = zap.New(core)
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c, logs
}

// badDiskResult is a result whose summary names disk -1 of a one-disk
// table: what crashed the collector. It never gets past the decoder; here
// it stands for whatever else could make the store panic.
func badDiskResult(rng *rand.Rand) *wire.Result {
	r := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	r.Runs[0].System = &wire.System{Disks: []string{"sda"}, Partitions: []bool{true},
		Summary: wire.SysSummary{Disks: []wire.DiskWindow{{I: -1}}}}
	return r
}

// TestIngestSurvivesAPanic: when the store panics on one result of a
// batch, the others of the batch are stored and acked, that one fails
// (not acked: its device keeps it), the panic is counted and logged, and
// the ingest goes on.
func TestIngestSurvivesAPanic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	col, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "p.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(), Web: "-"})
	rng := rand.New(rand.NewPCG(7, 8))
	var good []*wire.Result
	for range 20 {
		good = append(good, fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800))
	}
	bad := badDiskResult(rng)
	all := append([]*wire.Result{bad}, good...)
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, r := range all {
		wg.Go(func() {
			b, _ := r.MarshalMsg(nil)
			errs[i] = col.onResult(ctx, wire.Addr{Fleet: "lab", Device: "pi-1"}, r, b)
		})
	}
	wg.Wait()
	var pe *panicError
	if !errors.As(errs[0], &pe) {
		t.Errorf("the result the store panicked on: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("good result %d: %v", i, err)
		}
	}
	if n, _, _ := col.Store().CountResults(ctx); n != int64(len(good)) {
		t.Errorf("%d results stored, want %d", n, len(good))
	}
	if s := col.Stats(); s.Panics != 1 || s.Stored != int64(len(good)) || s.Failed != 1 {
		t.Errorf("stats %+v", s)
	}
	if l := logs.FilterMessage("result not stored: the store panicked on it").All(); len(l) != 1 || l[0].ContextMap()["result_id"] != bad.ID {
		t.Errorf("panic logged %d times: %v", len(l), l)
	}
	// And the next result goes through.
	next := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
	b, _ := next.MarshalMsg(nil)
	if err := col.onResult(ctx, wire.Addr{Fleet: "lab", Device: "pi-1"}, next, b); err != nil {
		t.Fatal(err)
	}
}

// TestIngestSurvivesAResultTheStoreRefuses: when the database refuses one
// result of a batch (here a trigger in the file), the others are stored
// and acked, and only that one fails (not acked: its device keeps it).
func TestIngestSurvivesAResultTheStoreRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	col, _ := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "r.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(), Web: "-"})
	if _, err := col.Store().w.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON results WHEN NEW.device = 'pi-2'
		BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 9))
	bad := fakeResult(rng, "lab", "pi-2", nil, time.Now(), 1000, 800)
	all := []*wire.Result{bad}
	for range 20 {
		all = append(all, fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800))
	}
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, r := range all {
		wg.Go(func() {
			b, _ := r.MarshalMsg(nil)
			errs[i] = col.onResult(ctx, wire.Addr{Fleet: r.Fleet, Device: r.Device}, r, b)
		})
	}
	wg.Wait()
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "refused") {
		t.Errorf("the refused result: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("good result %d: %v", i, err)
		}
	}
	if s := col.Stats(); s.Stored != 20 || s.Failed != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestStoredMalformedResult: a result a device sent to an older collector
// with a sample's disk index of -1 is in the store; its page answers an
// error (every view of it: the repetitions too) instead of a broken
// connection, and the other pages work.
func TestStoredMalformedResult(t *testing.T) {
	eachEngine(t, func(t *testing.T, e storeEngine) {
		ctx := context.Background()
		st := e.open(t)
		rng := rand.New(rand.NewPCG(9, 10))
		ok := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
		bad := fakeResult(rng, "lab", "pi-1", nil, time.Now(), 1000, 800)
		bad.Runs[0].System = &wire.System{Disks: []string{"sda"}, Partitions: []bool{true},
			Samples: []wire.SysSample{{T: 1000, Disks: []wire.DiskRate{{I: -1}}}}}
		if _, err := st.Ingest(ctx, []Incoming{incoming(t, ok), incoming(t, bad)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Result(ctx, bad.ID); !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("reading it back: %v", err)
		}
		w, err := NewWeb(st, nil)
		if err != nil {
			t.Fatal(err)
		}
		get := func(path string) int {
			rec := httptest.NewRecorder()
			w.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			return rec.Code
		}
		for _, path := range []string{"/runs/" + bad.ID, "/runs/" + bad.ID + "?run=0", "/runs/" + bad.ID + "?run=1"} {
			if code := get(path); code != http.StatusInternalServerError {
				t.Errorf("GET %s: %d", path, code)
			}
		}
		for _, path := range []string{"/", "/runs/" + ok.ID} {
			if code := get(path); code != 200 {
				t.Errorf("GET %s: %d", path, code)
			}
		}
	})
}

// FuzzResultViews: whatever a device sends that decodes, the store's
// figures, the run page's charts and the reports of it can be computed.
// Seeds: testdata/fuzz/FuzzResultViews (hostile indexes).
func FuzzResultViews(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	r := fakeResult(rng, "lab", "pi-1", nil, time.Date(2025, 11, 3, 14, 5, 0, 0, time.UTC), 1000, 800)
	r.Runs[0].Timeline = r.Runs[0].Timeline[:min(3, len(r.Runs[0].Timeline))]
	b, _ := r.MarshalMsg(nil)
	f.Add(b)
	// An HTTPS and HTTP/2 run: its TLS, handshake histogram and resets.
	h2 := wiretest.ResultH2(f, 20)
	h2.Runs[0].System, h2.Runs[0].Timeline, h2.Runs[0].Waiting, h2.Runs[0].Processing = nil, nil, nil, nil
	f.Add(wiretest.Marshal(f, h2))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := wire.DecodeResult(b)
		if err != nil {
			return
		}
		for i := range r.Runs {
			run := &r.Runs[i]
			Figures(run, r.Fingerprint)
			RunCharts(run)
			if lr, err := LoadResult(run, r.Spec); err == nil {
				report.WriteText(io.Discard, lr)
				report.WriteH2load(io.Discard, lr)
				report.WriteAB(io.Discard, lr, report.ABOptions{})
			}
			if run.System != nil {
				SystemReport(run.System)
			}
		}
	})
}

// TestLoginGate: past the cap of connections waiting for their login the
// next ones are closed at once; one that sends nothing is closed when its
// silent time is up, one that sends a byte when its login time is; a
// CONNECT announcing more than 16 KiB is refused; a device that logs in
// leaves the gate. Each is logged.
func TestLoginGate(t *testing.T) {
	listen := testenv.FreeAddr(t)
	_, logs := startObserved(t, Config{DB: filepath.Join(t.TempDir(), "g.db"), Listen: listen, Accounts: testAccounts(),
		Web: "-", limits: brokerLimits{pending: 3, loginWait: 2 * time.Second, silent: time.Second}})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", listen)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closed reports whether the server closed c within d.
	closed := func(c net.Conn, d time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(d))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	// A device that logs in leaves the gate: three of them fill nothing.
	for _, id := range []string{"pi-1", "pi-2"} {
		d := device(t, "tcp://"+listen, "lab", id, map[string]string{"pi-1": "one", "pi-2": "two"}[id])
		defer d.Close()
	}
	idle := []net.Conn{dial(), dial(), dial()}
	// Wait until the gate has taken the three (the server reads nothing
	// from them and they count once accepted): the fourth is closed.
	var fourth net.Conn
	testenv.Until(t, "a fourth connection refused", func() bool {
		fourth = dial()
		return closed(fourth, 200*time.Millisecond)
	})
	if closed(idle[0], 100*time.Millisecond) {
		t.Fatal("an idle connection was closed before its time was up")
	}
	for _, c := range idle {
		if !closed(c, 10*time.Second) {
			t.Error("an idle connection still open after its time was up")
		}
	}
	// The gate is empty again: a CONNECT announcing 20 KiB is refused at
	// its header.
	big := dial()
	big.Write([]byte{0x10, 0x80, 0xa0, 0x01}) // 20,480 bytes
	if !closed(big, 900*time.Millisecond) {
		t.Error("a CONNECT announcing 20 KiB was not refused")
	}
	// One byte, then nothing: closed when its login time is up, not at
	// its silent time.
	one := dial()
	start := time.Now()
	one.Write([]byte{0x10})
	if !closed(one, 5*time.Second) {
		t.Error("a connection that sent one byte still open after its time was up")
	} else if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("a connection that sent one byte closed after %s, before its login time", d)
	}
	for _, want := range []string{"connection closed: 3 others have not logged in yet", "connection closed: nothing sent within 1s", "connection closed: no login within 2s",
		"connection closed: CONNECT larger than 16384 bytes"} {
		if logs.FilterField(zap.String("reason", want)).Len() == 0 {
			t.Errorf("not logged: %s", want)
		}
	}
}

// TestConnectHeader follows the remaining length across reads, and the
// packet's bytes up to the end of the CONNECT.
func TestConnectHeader(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		fail bool
	}{
		{[]byte{0x10, 0x0c}, false},
		{[]byte{0x10, 0x80, 0x80, 0x01}, false}, // 16,384: the cap
		{[]byte{0x10, 0x81, 0x80, 0x01}, true},  // 16,385
		{[]byte{0x10, 0xff, 0xff, 0xff, 0x7f}, true},
		{[]byte{0x10, 0x0c, 0xff, 0xff, 0xff}, false}, // the packet's own bytes after the header
	} {
		for split := range len(c.in) + 1 { // the same bytes in two reads
			var h connectHeader
			err := h.feed(c.in[:split])
			if err == nil {
				err = h.feed(c.in[split:])
			}
			if (err != nil) != c.fail {
				t.Errorf("% x split at %d: %v", c.in, split, err)
			}
		}
	}
	var h connectHeader
	for i, b := range []byte{0x10, 0x83, 0x01, 1, 2} { // 131 bytes announced
		h.feed([]byte{b})
		if h.complete() {
			t.Fatalf("complete after %d bytes", i+1)
		}
	}
	h.feed(make([]byte, 128))
	if h.complete() {
		t.Fatal("complete one byte short")
	}
	h.feed([]byte{0})
	if !h.complete() {
		t.Error("not complete after the 131 bytes")
	}
}

// TestWillCheckedWhenSent: a Will the ACL does not allow that got past
// CONNECT anyway is not sent where it asked: OnWill sends it, empty and
// unretained, to a topic no device can read.
func TestWillCheckedWhenSent(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	r := newRefusals(zap.New(core), time.Minute)
	defer r.stop()
	acc := testAccounts()
	if err := acc.check(); err != nil {
		t.Fatal(err)
	}
	h := newACLHook(acc, prefix, r)
	cl := &mqtt.Client{ID: "edgebench-lab-pi-2"}
	cl.Properties.Username = []byte("pi-2")
	for _, topic := range []string{prefix + "/lab/_all/cmd", prefix + "/lab/pi-1/status", prefix + "/lab/pi-1/ack"} {
		w, err := h.OnWill(cl, mqtt.Will{TopicName: topic, Payload: []byte("forged"), Retain: true, Qos: 1})
		if err != nil || w.TopicName != refusedWill || len(w.Payload) != 0 || w.Retain {
			t.Errorf("Will on %s sent as %+v, %v", topic, w, err)
		}
	}
	own := mqtt.Will{TopicName: prefix + "/lab/pi-2/status", Payload: []byte("lost"), Retain: true, Qos: 1}
	if w, err := h.OnWill(cl, own); err != nil || !bytes.Equal(w.Payload, own.Payload) || w.TopicName != own.TopicName || !w.Retain {
		t.Errorf("the device's own Will sent as %+v, %v", w, err)
	}
	if n := logs.FilterMessage("broker refused a client").Len(); n != 1 {
		t.Errorf("%d lines logged, want 1 (then counted)", n)
	}
}

// TestRefusalsBounded: however many users and reasons, a period logs at
// most maxRefusalKeys first lines and one line for each of them repeated,
// plus one for the rest.
func TestRefusalsBounded(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	r := newRefusals(zap.New(core), time.Hour)
	for i := range 10_000 {
		r.note("c", fmt.Sprintf("user-%d", i%1000), "127.0.0.1:1", "unknown user")
	}
	if n := logs.Len(); n != maxRefusalKeys {
		t.Errorf("%d lines during the period, want %d", n, maxRefusalKeys)
	}
	r.stop()
	r.note("c", "late", "127.0.0.1:1", "unknown user")
	if n := logs.Len(); n != 2*maxRefusalKeys+1 {
		t.Errorf("%d lines in all, want %d", n, 2*maxRefusalKeys+1)
	}
	rest := logs.FilterMessage("broker refused more clients, too many users and reasons to list").All()
	if len(rest) != 1 || rest[0].ContextMap()["times"] != int64(10_000-maxRefusalKeys*10) {
		t.Errorf("the rest: %v", rest)
	}
	if s := logs.All()[0].ContextMap(); s["user"] != "user-0" || s["reason"] != "unknown user" {
		t.Errorf("first line %v", s)
	}
}

// TestAllowHosts: the Host names the web UI answers to.
func TestAllowHosts(t *testing.T) {
	h := allowHosts("192.168.1.5:8080", []string{"Bench.LAN"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "localhost": 200, "[::1]:8080": 200, "[::1]": 200, "192.168.1.5:8080": 200, "10.0.0.9": 200,
		"bench.lan": 200, "BENCH.lan.:8080": 200, "": 200,
		"evil.example": 421, "evil.example:8080": 421, "localhost.evil.example": 421, "bench.lan.evil.example": 421,
		"127.0.0.1.nip.io": 421, "[fe80::1%25eth0]:8080": 421,
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}

// TestStoreOwnerOnly: the store, its -wal and -shm files are readable by
// their owner only: they hold what the devices sent and the commands.
func TestStoreOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := OpenStore(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Ingest(context.Background(), []Incoming{incoming(t, fakeResult(rand.New(rand.NewPCG(1, 1)), "lab", "pi-1", nil, time.Now(), 1, 1))}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(f), m)
		}
	}
}
