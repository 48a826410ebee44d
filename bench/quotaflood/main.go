// Command quotaflood is issue 19's quota attack, for bench/quota-flood.sh: a
// device with a valid account publishes -n valid results, each with one
// label padded to -pad bytes (195 KB a result by default), as fast as the
// broker takes them, while another device is triggered through the API
// every -every; it prints that device's trigger latency (POST to the
// command's arrival) before and during the flood, and how the collector
// answered the flood (acks and rejections).
//
// With -series it is issue 31's attack on /metrics instead: the other
// device first sends results of -honest server labels of its own (its
// fleet's series), then the flooding device gives each of its results a
// new server label and a start time -ahead of now; it prints the
// exported series of edgebench_series_latest of each device afterwards.
//
//	quotaflood -broker 127.0.0.1:18831 -web 127.0.0.1:18082 -n 3000 -pad 200000
//	quotaflood -broker 127.0.0.1:18831 -web 127.0.0.1:18082 -n 2100 -pad 0 -series
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

func main() {
	broker := flag.String("broker", "127.0.0.1:18831", "the collector's broker")
	web := flag.String("web", "127.0.0.1:18082", "the collector's web API")
	n := flag.Int("n", 3000, "results the flooding device publishes")
	pad := flag.Int("pad", 200000, "bytes of the padded label of each")
	every := flag.Duration("every", 500*time.Millisecond, "how often the other device is triggered")
	series := flag.Bool("series", false, "a new server label each, started -ahead of now: the attack on /metrics")
	ahead := flag.Duration("ahead", 23*time.Hour, "with -series: how far ahead of now each result starts")
	honest := flag.Int("honest", 5, "with -series: server labels the other device sends results of first")
	flag.Parse()
	if err := run(*broker, *web, *n, *pad, *every, attack{*series, *ahead, *honest}); err != nil {
		fmt.Fprintln(os.Stderr, "quotaflood:", err)
		os.Exit(1)
	}
}

func dial(broker, fleet, id, pw string) (*transport.Client, error) {
	dir, err := os.MkdirTemp("", "quotaflood-")
	if err != nil {
		return nil, err
	}
	sp, err := spool.Open(dir, spool.Limits{MaxCount: 10, MaxBytes: 1 << 20})
	if err != nil {
		return nil, err
	}
	// With its birth (a retained status) as an agent's: the collector
	// triggers only the devices it knows.
	c, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + broker, Username: id, Password: pw, Fleet: fleet, Device: id},
		transport.Options{Spool: sp, Birth: &wire.Status{BootID: "quotaflood-" + id}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c, c.WaitConnected(ctx)
}

// attack says how the flooding device's results are made: -series,
// -ahead and -honest.
type attack struct {
	series bool
	ahead  time.Duration
	honest int
}

// result is the i-th result of device (lab/...): with a pad label of
// pad bytes unless 0, and server label server unless "".
func result(device string, i int, pad []byte, server string, at time.Time) *wire.Result {
	labels := map[string]string{"i": fmt.Sprint(i)}
	if len(pad) > 0 {
		labels["pad"] = string(pad)
	}
	if server != "" {
		labels["server"] = server
	}
	return &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: "lab", Device: device, CreatedAt: at,
		Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded, Labels: labels,
		Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/", Connections: 1, DurationMS: 1000},
		Runs: []wire.Run{{StartedAt: at, DurationUS: 1e6, Completed: 1000, OK: 1000}}}
}

func run(broker, web string, n, pad int, every time.Duration, how attack) error {
	ctx := context.Background()
	victim, err := dial(broker, "lab", "pi-2", "two")
	if err != nil {
		return err
	}
	defer victim.Close()
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	if err := victim.SubscribeCommands(func(_ context.Context, c *wire.Command) {
		mu.Lock()
		arrived[c.ID] = time.Now()
		mu.Unlock()
	}); err != nil {
		return err
	}
	flooder, err := dial(broker, "lab", "pi-1", "one")
	if err != nil {
		return err
	}
	defer flooder.Close()
	var acked, rejected atomic.Int64
	ackTopic := wire.DefaultPrefix + "/lab/pi-1/ack"
	if err := flooder.Subscribe(ackTopic, 1, func(_ context.Context, _ string, b []byte) {
		if a, err := wire.DecodeAck(b); err == nil {
			if a.Rejected != "" {
				rejected.Add(1)
			} else {
				acked.Add(1)
			}
		}
	}); err != nil {
		return err
	}

	trigger := func() (time.Duration, error) {
		body, _ := json.Marshal(map[string]any{"fleet": "lab", "device": "pi-2",
			"spec": wire.LoadTestSpec{URL: "http://127.0.0.1:9/", Connections: 1, DurationMS: 1000}})
		start := time.Now()
		resp, err := http.Post("http://"+web+"/api/trigger", "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		var t struct {
			CommandID string `json:"cmd_id"`
		}
		json.NewDecoder(resp.Body).Decode(&t)
		resp.Body.Close()
		if resp.StatusCode != 200 || t.CommandID == "" {
			return 0, fmt.Errorf("trigger: %s", resp.Status)
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			at, ok := arrived[t.CommandID]
			mu.Unlock()
			if ok {
				return at.Sub(start), nil
			}
		}
		return 0, fmt.Errorf("command %s never arrived", t.CommandID)
	}
	measure := func(stop <-chan struct{}, max int) []time.Duration {
		var out []time.Duration
		for len(out) < max {
			d, err := trigger()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
			} else {
				out = append(out, d)
			}
			select {
			case <-stop:
				return out
			case <-time.After(every):
			}
		}
		return out
	}
	idle := measure(nil, 10)
	if how.series {
		for i := range how.honest {
			b, err := result("pi-2", i, nil, fmt.Sprintf("honest-%d", i), time.Now().UTC()).MarshalMsg(nil)
			if err != nil {
				return err
			}
			if err := victim.Publish(ctx, wire.DefaultPrefix+"/lab/pi-2/result", 1, false, b); err != nil {
				return err
			}
		}
	}

	label := bytes.Repeat([]byte("x"), pad)
	stop := make(chan struct{})
	during := make(chan []time.Duration, 1)
	go func() { during <- measure(stop, 1<<30) }()
	start := time.Now()
	topic := wire.DefaultPrefix + "/lab/pi-1/result"
	var size int
	for i := range n {
		r := result("pi-1", i, label, "", time.Now().UTC())
		if how.series {
			r = result("pi-1", i, label, fmt.Sprintf("s%d", i), time.Now().UTC().Add(how.ahead))
		}
		b, err := r.MarshalMsg(nil)
		if err != nil {
			return err
		}
		size = len(b)
		if err := flooder.Publish(ctx, topic, 1, false, b); err != nil {
			return err
		}
	}
	sent := time.Since(start)
	// Until every result is answered (or nothing more comes for 10 s).
	last, lastN := time.Now(), int64(-1)
	for acked.Load()+rejected.Load() < int64(n) && time.Since(last) < 10*time.Second {
		if k := acked.Load() + rejected.Load(); k != lastN {
			last, lastN = time.Now(), k
		}
		time.Sleep(100 * time.Millisecond)
	}
	answered := time.Since(start)
	close(stop)
	flood := <-during
	fmt.Printf("flood: %d results of %d bytes published in %v, answered in %v: %d acked, %d rejected\n",
		n, size, sent.Round(time.Millisecond), answered.Round(time.Millisecond), acked.Load(), rejected.Load())
	fmt.Printf("pi-2's trigger, idle:         %s\n", summary(idle))
	fmt.Printf("pi-2's trigger, during flood: %s\n", summary(flood))
	if how.series {
		return exported(web)
	}
	return nil
}

// exported prints the series of edgebench_series_latest that /metrics
// exports, by device.
func exported(web string) error {
	resp, err := http.Get("http://" + web + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("/metrics: %s", resp.Status)
	}
	by := map[string]int{}
	total := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "edgebench_series_latest{") {
			continue
		}
		total++
		dev := "?"
		if _, rest, ok := strings.Cut(line, `device="`); ok {
			dev, _, _ = strings.Cut(rest, `"`)
		}
		by[dev]++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Printf("/metrics: %d series of edgebench_series_latest: pi-1 (the flood) %d, pi-2 %d\n", total, by["pi-1"], by["pi-2"])
	return nil
}

func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	slices.Sort(ds)
	return fmt.Sprintf("n=%d median %v, max %v", len(ds), ds[len(ds)/2].Round(100*time.Microsecond), ds[len(ds)-1].Round(100*time.Microsecond))
}
