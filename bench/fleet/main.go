// Command fleet simulates a fleet of devices for bench/fleet.sh: each of
// --devices MQTT connections publishes --results results on its own result
// topic and waits for the collector's ack of every one. It prints how many
// results per second were stored and acknowledged, and then checks the
// collector's store (a SQLite file or a postgres:// URL): every result
// stored, none twice.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/edgebench/edgebench/bench/internal/simdev"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/wire"
)

type config struct {
	broker, accounts, db, fleet string
	devices, results            int
	timeout                     time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.broker, "broker", "tcp://127.0.0.1:1883", "the collector's broker")
	flag.StringVar(&cfg.accounts, "write-accounts", "", "write an accounts file for the devices to this path and exit")
	flag.StringVar(&cfg.db, "db", "", "the collectors' store, a SQLite file or a postgres:// URL, checked at the end")
	flag.StringVar(&cfg.fleet, "fleet", "bench", "fleet id")
	flag.IntVar(&cfg.devices, "devices", 1000, "simulated devices")
	flag.IntVar(&cfg.results, "results", 5, "results per device")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "give up after this long")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	if cfg.accounts != "" {
		return simdev.WriteAccounts(cfg.accounts, cfg.fleet, cfg.devices, "")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	payload := sample(cfg.fleet)

	// Connect everybody first, then publish: the measured window is ingest.
	tConnect := time.Now()
	fleet, err := simdev.Connect(cfg.broker, cfg.fleet, cfg.devices, cfg.results)
	if err != nil {
		return err
	}
	defer fleet.Close()
	clients, acks := fleet.Clients, fleet.Acks
	fmt.Printf("connected %d devices in %v\n", cfg.devices, time.Since(tConnect).Round(time.Millisecond))

	total := cfg.devices * cfg.results
	var acked atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range cfg.devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := simdev.ID(i)
			topic := wire.DefaultPrefix + "/" + cfg.fleet + "/" + id + "/result"
			want := map[string]bool{}
			for range cfg.results {
				r := *payload
				r.ID, r.Device = wire.NewID(), id
				b, err := r.MarshalMsg(nil)
				if err != nil {
					failed.Store(err)
					return
				}
				want[r.ID] = true
				clients[i].Publish(topic, 1, false, b) // the ack, not the PUBACK, is the proof
			}
			for len(want) > 0 {
				select {
				case got := <-acks[i]:
					if got.Rejected != "" {
						failed.Store(fmt.Errorf("%s: result %s refused: %s", id, got.ResultID, got.Rejected))
						return
					}
					if want[got.ResultID] {
						delete(want, got.ResultID)
						acked.Add(1)
					}
				case <-ctx.Done():
					failed.Store(fmt.Errorf("%s: %d acks missing: %w", id, len(want), ctx.Err()))
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	fmt.Printf("%d results from %d devices stored and acked in %v: %.0f results/s\n",
		acked.Load(), cfg.devices, elapsed.Round(time.Millisecond), float64(acked.Load())/elapsed.Seconds())
	if cfg.db == "" {
		return nil
	}
	s, err := store.Open(ctx, cfg.db)
	if err != nil {
		return err
	}
	defer s.Close()
	n, runs, err := s.CountResults(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("store: %d results, %d runs (want %d each)\n", n, runs, total)
	if n != int64(total) || runs != int64(total) {
		return errors.New("results lost or doubled")
	}
	return nil
}

// sample is a realistic small result: one run with a latency histogram
// and a 10 s timeline.
func sample(fleet string) *wire.Result {
	h := report.NewLatencyHistogram()
	for i := range 5000 {
		h.Record(300 + int64(i%700))
	}
	var tl []wire.Second
	for s := range 10 {
		tl = append(tl, wire.Second{T: int32(s), Completed: 1000, P50US: 600, P99US: 990})
	}
	return &wire.Result{V: wire.SchemaVersion, Fleet: fleet, CreatedAt: time.Now(), Kind: wire.KindLoadTest,
		Outcome: wire.StateSucceeded, Labels: map[string]string{"server": "nginx"},
		Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/", Method: "GET", Connections: 10, DurationMS: 10000, KeepAlive: true},
		Runs: []wire.Run{{StartedAt: time.Now(), DurationUS: 10e6, Completed: 10000, OK: 10000, DocLength: 13,
			Latency: h.AppendCompact(nil), Timeline: tl}}}
}
