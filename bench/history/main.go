// Command history fills a collector with a generated fleet history for
// bench/history.sh: --devices devices, each publishing its results of
// index --from to --to (one an hour before now, the newest last) on its
// own result topic over MQTT, and waiting for the collector's ack of every
// one. Each result is one run of a realistic size (a latency histogram, a
// 30 s timeline, 30 probe samples with the server's and the generator's
// rows) whose figures carry --noise of Gaussian noise around the device's
// own level, and device --step-device runs --step-pct faster from its
// result --step-at on (a planted step the change detector must find). It
// prints the results stored and acknowledged per second; with --ahead
// every payload is made before the clock starts, so that the rate is the
// collector's, not the generator's.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/edgebench/edgebench/bench/internal/simdev"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

type config struct {
	broker, accounts, fleet string
	devices, from, to       int
	window                  int
	noise, stepPct          float64
	stepDevice, stepAt      int
	seed                    uint64
	epoch                   time.Time
	timeout, every          time.Duration
	ahead                   bool
}

func main() {
	var cfg config
	var epoch string
	flag.StringVar(&cfg.broker, "broker", "tcp://127.0.0.1:1883", "the collector's broker")
	flag.StringVar(&cfg.accounts, "write-accounts", "", "write an accounts file for the devices (their quota lifted) to this path and exit")
	flag.StringVar(&cfg.fleet, "fleet", "hist", "fleet id")
	flag.IntVar(&cfg.devices, "devices", 250, "simulated devices")
	flag.IntVar(&cfg.from, "from", 0, "each device's first result index to publish")
	flag.IntVar(&cfg.to, "to", 40, "each device's result index to stop before")
	flag.IntVar(&cfg.window, "window", 32, "results a device publishes ahead of their acks")
	flag.Float64Var(&cfg.noise, "noise", 0.03, "relative standard deviation of each figure")
	flag.IntVar(&cfg.stepDevice, "step-device", 7, "the device with a planted step (-1: none)")
	flag.IntVar(&cfg.stepAt, "step-at", 30, "its first result index after the step")
	flag.Float64Var(&cfg.stepPct, "step-pct", 15, "the step: req/s up by this many %, latency down as much")
	flag.Uint64Var(&cfg.seed, "seed", 29, "the noise's seed (a result's figures depend on it, its device and its index only)")
	flag.StringVar(&epoch, "epoch", "", "the time of result index 0, RFC 3339 (default: 5000 hours before now, to the hour)")
	flag.DurationVar(&cfg.timeout, "timeout", 2*time.Hour, "give up after this long")
	flag.DurationVar(&cfg.every, "every", time.Hour, "the time between a device's results (a result more than a day ahead of the collector's clock is refused: the default's 5,000 hours hold 5,024 results a device)")
	flag.BoolVar(&cfg.ahead, "ahead", false, "generate every payload before the clock starts, so that the rate is the collector's and not the generator's (they share the box; the fleet's devices would not)")
	flag.Parse()
	cfg.epoch = time.Now().Add(-5000 * time.Hour).Truncate(time.Hour)
	if epoch != "" {
		t, err := time.Parse(time.RFC3339, epoch)
		if err != nil {
			fmt.Fprintln(os.Stderr, "history: --epoch:", err)
			os.Exit(2)
		}
		cfg.epoch = t
	}
	if cfg.to < cfg.from || cfg.devices < 1 || cfg.window < 1 {
		fmt.Fprintln(os.Stderr, "history: want --devices and --window of at least 1 and --to at least --from")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "history:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	if cfg.accounts != "" {
		// Results of an hour apart arrive at thousands a second: the
		// quota's rate and bytes are lifted (-1), as a bench's fleet is
		// trusted.
		return simdev.WriteAccounts(cfg.accounts, cfg.fleet, cfg.devices,
			"quota: {results_per_minute: -1, burst_results: -1, bytes_per_day: -1}")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	// Each device has at most window results unacked: its acks' channel
	// never fills.
	fleet, err := simdev.Connect(cfg.broker, cfg.fleet, cfg.devices, 4*cfg.window)
	if err != nil {
		return err
	}
	defer fleet.Close()
	clients, acks := fleet.Clients, fleet.Acks

	// payload is device d's result of index i, its id and its msgpack.
	payload := func(d, i int) (string, []byte, error) {
		r := cfg.result(d, i)
		b, err := r.MarshalMsg(nil)
		return r.ID, b, err
	}
	if cfg.ahead {
		live := payload
		type made struct {
			id string
			b  []byte
		}
		all := make([][]made, cfg.devices)
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for d := range all {
			all[d] = make([]made, cfg.to-cfg.from)
			g.Go(func() error {
				for i := range all[d] {
					id, b, err := live(d, cfg.from+i)
					if err != nil {
						return err
					}
					all[d][i] = made{id, b}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		payload = func(d, i int) (string, []byte, error) { m := all[d][i-cfg.from]; return m.id, m.b, nil }
	}

	var acked atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for d := range cfg.devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := simdev.ID(d)
			topic := wire.DefaultPrefix + "/" + cfg.fleet + "/" + id + "/result"
			want := map[string]bool{}
			wait := func(n int) bool { // until at most n are unacked
				for len(want) > n {
					select {
					case got := <-acks[d]:
						if got.Rejected != "" { // a rate of refusals is no ingest rate
							failed.Store(fmt.Errorf("%s: result %s refused: %s", id, got.ResultID, got.Rejected))
							return false
						}
						if want[got.ResultID] {
							delete(want, got.ResultID)
							acked.Add(1)
						}
					case <-ctx.Done():
						failed.Store(fmt.Errorf("%s: %d acks missing: %w", id, len(want), ctx.Err()))
						return false
					}
				}
				return true
			}
			for i := cfg.from; i < cfg.to; i++ {
				id, b, err := payload(d, i)
				if err != nil {
					failed.Store(err)
					return
				}
				want[id] = true
				clients[d].Publish(topic, 1, false, b) // the ack, not the PUBACK, is the proof
				if !wait(cfg.window - 1) {
					return
				}
			}
			wait(0)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	n := acked.Load()
	made := ""
	if cfg.ahead {
		made = ", generated before the clock started"
	}
	fmt.Printf("%d results (index %d to %d of %d devices%s) stored and acked in %v: %.0f results/s\n",
		n, cfg.from, cfg.to-1, cfg.devices, made, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())
	return nil
}

// result is device d's result of index i: its figures depend on the seed,
// d and i only, so that a history filled in stages is the one filled at
// once.
func (cfg *config) result(d, i int) *wire.Result {
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(d)<<32|uint64(i)))
	noise := func() float64 { return max(0.5, 1+cfg.noise*rng.NormFloat64()) }
	level := 1 + float64(d%10)/10 // the devices differ: 1.0x to 1.9x
	if d == cfg.stepDevice && i >= cfg.stepAt {
		level *= 1 + cfg.stepPct/100
	}
	at := cfg.epoch.Add(time.Duration(i) * cfg.every)
	const secs = 30
	rps := 2000 * level * noise()
	meanUS := 5000 / level * noise() // 10 connections: Little's law
	h := report.NewLatencyHistogram()
	for k := range 2000 {
		// a spread around the mean: 0.5x to 1.5x, and a tail
		v := meanUS * (0.5 + float64(k)/2000)
		if k%100 == 0 {
			v *= 4
		}
		h.Record(int64(v))
	}
	completed := int64(rps * secs)
	tl := make([]wire.Second, secs)
	for s := range tl {
		tl[s] = wire.Second{T: int32(s), Completed: completed / secs, P50US: int64(meanUS), P99US: int64(2 * meanUS)}
	}
	cpuBP := int32(min(9500, 4000*noise()))
	samples := make([]wire.SysSample, secs)
	for s := range samples {
		used, free := int64(300_000+rng.IntN(1000)), int64(600_000)
		samples[s] = wire.SysSample{T: int32(1000 * (s + 1)),
			CPU:   &wire.CPUShares{User: cpuBP * 6 / 10, System: cpuBP * 4 / 10, Idle: 10000 - cpuBP},
			Mem:   &wire.MemSample{Used: used, Free: free},
			Disks: []wire.DiskRate{{I: 0, WriteKBs: int64(rng.IntN(50))}},
			Nets:  []wire.NetRate{{I: 0, RxKBs: 500, TxKBs: 2000, RxPps: 4000, TxPps: 4000}},
			Procs: []wire.ProcRate{{I: 0, Count: 2, CPUBP: ptr(cpuBP / 2)}, {I: 1, Count: 1, CPUBP: ptr(cpuBP / 3)}}}
	}
	ws := func(v int32) wire.WindowStat { return wire.WindowStat{Mean: int64(v), Max: int64(v) + 200} }
	sys := &wire.System{IntervalMS: 1000, Disks: []string{"mmcblk0"}, Nets: []string{"eth0"}, Procs: []string{"nginx", "edgebench"},
		Samples: samples,
		Summary: wire.SysSummary{Seconds: secs, Samples: secs,
			CPU: &wire.CPUWindow{User: ws(cpuBP * 6 / 10), System: ws(cpuBP * 4 / 10), Idle: ws(10000 - cpuBP)},
			Mem: &wire.MemWindow{TotalKB: 1_000_000, Used: wire.WindowStat{Mean: 300_000, Max: 301_000},
				Free: wire.WindowStat{Mean: 600_000, Max: 601_000}},
			Disks: []wire.DiskWindow{{I: 0, WriteKBs: wire.WindowStat{Mean: 25, Max: 50}}},
			Procs: []wire.ProcWindow{{I: 0, Count: 2, CPUBP: &wire.WindowStat{Mean: int64(cpuBP / 2), Max: int64(cpuBP)}, Role: wire.ProcServer},
				{I: 1, Count: 1, CPUBP: &wire.WindowStat{Mean: int64(cpuBP / 3), Max: int64(cpuBP / 2)}, Role: wire.ProcGenerator}}}}
	return &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: cfg.fleet, Device: simdev.ID(d), CreatedAt: at.Add(secs * time.Second),
		Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded, Labels: map[string]string{"server": "nginx"},
		Spec: wire.RunSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 10, Threads: 2, DurationMS: secs * 1000, KeepAlive: true},
		Fingerprint: wire.Fingerprint{AgentVersion: "bench", Kernel: "6.1.0", OS: "Debian 12", Arch: "arm64",
			Board: fmt.Sprintf("board-%d", d%5), Cores: 4, Server: "nginx/1.22.1"},
		Runs: []wire.Run{{StartedAt: at, DurationUS: secs * 1e6, Completed: completed, OK: completed,
			Bytes: completed * 250, BodyBytes: completed * 13, Connects: 10, DocLength: 13, Server: "nginx/1.22.1",
			Latency: h.AppendCompact(nil), Timeline: tl, System: sys,
			Verdict: &wire.Verdict{LimitedBy: "server", Valid: true}}}}
}

func ptr[T any](v T) *T { return &v }
