package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

// FakeRun builds a run of about rps requests/s over 10 s with latencies
// around p50us, and a system summary.
func FakeRun(rng *rand.Rand, start time.Time, rps float64, p50us int64, cpuBusyBP int64) wire.Run {
	h := report.NewLatencyHistogram()
	for range 2000 {
		h.Record(p50us/2 + rng.Int64N(p50us+1))
	}
	n := int64(rps * 10)
	temp := int32(550)
	sec := make([]wire.Second, 10)
	samples := make([]wire.SysSample, 10)
	for i := range sec {
		sec[i] = wire.Second{T: int32(i), Completed: n / 10, P50US: p50us, P99US: 2 * p50us}
		busy := int32(cpuBusyBP) + int32(rng.IntN(200))
		tc := []int32{temp + int32(i)}
		samples[i] = wire.SysSample{T: int32(1000 * (i + 1)), CPU: &wire.CPUShares{User: busy, Idle: 10000 - busy}, TempDC: tc,
			Disks: []wire.DiskRate{{I: 0, ReadKBs: 12, WriteKBs: 30}}}
	}
	return wire.Run{
		StartedAt: start, DurationUS: 10_000_000, Completed: n, OK: n, Errors: wire.ErrorCounts{Timeout: 3},
		DocLength: 13, Server: "nginx/1.22.1", Latency: h.AppendCompact(nil), Timeline: sec,
		System: &wire.System{
			IntervalMS: 1000, Disks: []string{"mmcblk0", "mmcblk0p1"}, Partitions: []bool{false, true}, Zones: []string{"cpu-thermal"},
			Samples: samples,
			Summary: wire.SysSummary{
				Seconds: 10, Samples: 10,
				CPU: &wire.CPUWindow{User: wire.WindowStat{Mean: cpuBusyBP, Max: cpuBusyBP + 200}, Idle: wire.WindowStat{Mean: 10000 - cpuBusyBP}},
				Mem: &wire.MemWindow{TotalKB: 4 << 20, Used: wire.WindowStat{Mean: 300000, Max: 310000}},
				Disks: []wire.DiskWindow{
					{I: 0, ReadKBs: wire.WindowStat{Mean: 12}, WriteKBs: wire.WindowStat{Mean: 30}},
					{I: 1, ReadKBs: wire.WindowStat{Mean: 12}, WriteKBs: wire.WindowStat{Mean: 30}},
				},
				TempMaxDC: &temp,
			},
		},
	}
}

// FakeResult builds a succeeded result of one run.
func FakeResult(rng *rand.Rand, fleet, device string, labels map[string]string, at time.Time, rps float64, p50us int64) *wire.Result {
	return &wire.Result{
		V: wire.SchemaVersion, ID: wire.NewID(), Fleet: fleet, Device: device, CreatedAt: at, Kind: wire.KindLoadTest,
		Outcome: wire.StateSucceeded, Labels: labels,
		Spec:        wire.RunSpec{URL: "http://127.0.0.1:8080/", Method: "GET", Connections: 10, DurationMS: 10000, KeepAlive: true},
		Fingerprint: wire.Fingerprint{Board: "Raspberry Pi 4 Model B Rev 1.4", Kernel: "6.1.0-rpi7", OS: "Debian GNU/Linux 12", Arch: "aarch64", Cores: 4, Server: "nginx/1.22.1"},
		Runs:        []wire.Run{FakeRun(rng, at, rps, p50us, 3500)},
	}
}

// Incoming is r as the store takes it, with its payload.
func Incoming(t testing.TB, r *wire.Result) store.Incoming {
	t.Helper()
	b, err := r.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	return store.Incoming{Result: r, Raw: b}
}

// OpenSQLite opens a new SQLite store for the test.
func OpenSQLite(t testing.TB) *store.Store {
	t.Helper()
	return SQLite.Open(t)
}

// Engine is an engine the store's tests run against.
type Engine string

// SQLite is the engine of a file.
const SQLite Engine = "sqlite"

// EachEngine runs f as a subtest against SQLite and against a real
// PostgreSQL (skipped loudly without one, failed in CI).
func EachEngine(t *testing.T, f func(t *testing.T, e Engine)) {
	for _, e := range testenv.StoreEngines {
		t.Run(e, func(t *testing.T) { f(t, Engine(e)) })
	}
}

// DB is the location of a new store of engine e.
func (e Engine) DB(t testing.TB) string {
	t.Helper()
	return testenv.StoreDB(t, string(e))
}

// Open opens a new store of engine e, closed when the test ends.
func (e Engine) Open(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), e.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// SeedCompare stores 5 runs each of nginx and kangle on two devices:
// kangle about 20 % faster, pi-2 like pi-1.
func SeedCompare(t testing.TB, s *store.Store) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var batch []store.Incoming
	for i := range 5 {
		for _, dev := range []string{"pi-1", "pi-2"} {
			jitter := rng.Float64() * 20
			batch = append(batch,
				Incoming(t, FakeResult(rng, "lab", dev, map[string]string{"server": "nginx"}, at, 1000+jitter, 800)),
				Incoming(t, FakeResult(rng, "lab", dev, map[string]string{"server": "kangle"}, at.Add(time.Second), 1200+jitter, 650)))
			at = at.Add(time.Minute)
		}
		_ = i
	}
	if _, err := s.Ingest(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
}
