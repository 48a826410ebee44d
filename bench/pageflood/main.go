// Command pageflood is issue 31's attack on the expensive pages, for
// bench/page-flood.sh. With -seed it fills a SQLite store with -results
// results of -devices devices spread over the last -days days (a tenth of
// the series step down by 15 % halfway, so /changes has changes to draw);
// with -get it sends -parallel GETs of a URL at once and prints each
// one's status and time.
//
//	pageflood -seed c.db -results 60000
//	pageflood -get 'http://127.0.0.1:18094/changes?days=365' -parallel 4 [-token T]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

func main() {
	seed := flag.String("seed", "", "fill this SQLite store")
	results := flag.Int("results", 60000, "results to store")
	devices := flag.Int("devices", 20, "devices they come from")
	days := flag.Int("days", 365, "the days they spread over, up to now")
	get := flag.String("get", "", "GET this URL")
	parallel := flag.Int("parallel", 4, "GETs at once")
	token := flag.String("token", "", "bearer token of the GETs")
	flag.Parse()
	var err error
	switch {
	case *seed != "":
		err = fill(*seed, *results, *devices, *days)
	case *get != "":
		err = flood(*get, *parallel, *token)
	default:
		err = fmt.Errorf("want -seed DB or -get URL")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pageflood:", err)
		os.Exit(1)
	}
}

func fill(db string, n, devices, days int) error {
	ctx := context.Background()
	s, err := store.Open(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(31, 4))
	start := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
	step := time.Duration(days) * 24 * time.Hour / time.Duration(n)
	servers := []string{"nginx", "caddy"}
	var batch []store.Incoming
	for i := range n {
		at := start.Add(time.Duration(i) * step)
		dev := i % devices
		rps := 1000.0 + 50*rng.NormFloat64()
		if dev%10 == 0 && i > n/2 {
			rps *= 0.85
		}
		r := storetest.FakeResult(rng, "lab", fmt.Sprintf("pi-%d", dev), map[string]string{"server": servers[dev%2]}, at, rps, 800)
		b, err := r.MarshalMsg(nil)
		if err != nil {
			return err
		}
		batch = append(batch, store.Incoming{Result: r, Raw: b, Received: at})
		if len(batch) == 1000 || i == n-1 {
			if _, err := s.Ingest(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

func flood(url string, parallel int, token string) error {
	var wg sync.WaitGroup
	lines := make([]string, parallel)
	start := time.Now()
	for i := range parallel {
		wg.Go(func() {
			req, err := http.NewRequest("GET", url, nil)
			if err != nil {
				lines[i] = err.Error()
				return
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			t := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				lines[i] = err.Error()
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lines[i] = fmt.Sprintf("%s, %d bytes, in %v", resp.Status, n, time.Since(t).Round(time.Millisecond))
		})
	}
	wg.Wait()
	fmt.Printf("%d GETs of %s at once, all answered in %v:\n", parallel, url, time.Since(start).Round(time.Millisecond))
	for _, l := range lines {
		fmt.Println("  " + l)
	}
	return nil
}
