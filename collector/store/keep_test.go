package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/retention"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestKeepSamples: retention with a samples' time prunes the per-second
// samples and histograms of the results received before it and nothing
// else: the results, their runs' figures and their probe's summaries stay
// and read as before, marked pruned; the newer keep their samples; a
// second pass prunes nothing.
func TestKeepSamples(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(30, 30))
		now := time.Now()
		var batch []store.Incoming
		var old, recent []string
		for i := range 5 {
			for _, age := range []time.Duration{40 * 24 * time.Hour, 29 * 24 * time.Hour} {
				at := now.Add(-age + time.Duration(i)*time.Minute)
				r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at, 1000, 800)
				in := storetest.Incoming(t, r)
				in.Received = at
				batch = append(batch, in)
				if age > 30*24*time.Hour {
					old = append(old, r.ID)
				} else {
					recent = append(recent, r.ID)
				}
			}
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		before := map[string]any{}
		for _, id := range append(slices.Clone(old), recent...) {
			figs, err := s.RunFigures(ctx, id)
			if err != nil || len(figs) != 1 {
				t.Fatalf("figures of %s: %v %v", id, figs, err)
			}
			before[id] = fmt.Sprintf("%+v", figs)
		}
		p, err := s.Retain(ctx, retention.Retention{Samples: now.Add(-30 * 24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if p.Samples != int64(len(old)) || p.Results != 0 || p.Commands != 0 || p.Events != 0 || p.Changes != 0 {
			t.Errorf("pruned %+v, want the samples of %d results and nothing else", p, len(old))
		}
		if n, runs, err := s.CountResults(ctx); err != nil || n != 10 || runs != 10 {
			t.Errorf("%d results, %d runs (%v), want 10 each", n, runs, err)
		}
		for _, id := range append(slices.Clone(old), recent...) {
			pruned := slices.Contains(old, id)
			r, k, err := s.ResultKept(ctx, id)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if k.SamplesPruned != pruned {
				t.Errorf("%s: samples pruned %v, want %v", id, k.SamplesPruned, pruned)
			}
			run := r.Runs[0]
			hasBulk := len(run.Timeline) > 0 || len(run.Latency) > 0 || len(run.System.Samples) > 0
			if hasBulk == pruned {
				t.Errorf("%s (pruned %v): timeline %d, latency %d bytes, probe samples %d", id, pruned,
					len(run.Timeline), len(run.Latency), len(run.System.Samples))
			}
			if run.System == nil || run.System.Summary.CPU == nil || run.System.Summary.Seconds != 10 || run.Completed == 0 {
				t.Errorf("%s: the summary lost the run's counts or the probe's summary: %+v", id, run.System)
			}
			figs, err := s.RunFigures(ctx, id)
			if err != nil || fmt.Sprintf("%+v", figs) != before[id] {
				t.Errorf("%s: figures after pruning %+v %v, before %v", id, figs, err, before[id])
			}
		}
		if p, err := s.Retain(ctx, retention.Retention{Samples: now.Add(-30 * 24 * time.Hour)}); err != nil || p != (retention.Pruned{}) {
			t.Errorf("pruning again: %+v %v", p, err)
		}
	})
}

// TestRunsPaged: the pages of a listing, walked by their cursors, are the
// listing whole, in order, each row once, also where results share a
// receive time, with a filter, and the last page has no next.
func TestRunsPaged(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(31, 31))
		now := time.Now()
		var batch []store.Incoming
		for i := range 23 {
			at := now.Add(-time.Duration(i/3) * time.Minute) // three at a time received at once
			r := storetest.FakeResult(rng, "lab", fmt.Sprintf("pi-%d", i%2), nil, at, 1000, 800)
			in := storetest.Incoming(t, r)
			in.Received = at
			batch = append(batch, in)
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, f := range []store.Filter{{}, {Device: "pi-1"}} {
			whole, err := s.Runs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, r := range whole {
				all = append(all, r.ID)
			}
			for _, size := range []int{1, 3, 5, len(all), len(all) + 1} {
				var got []string
				f := f
				f.Limit = size
				for pages := 0; ; pages++ {
					if pages > len(all)+1 {
						t.Fatalf("%+v: more pages than rows", f)
					}
					p, err := s.RunsAfter(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if len(p.Runs) > size {
						t.Fatalf("a page of %d rows, limit %d", len(p.Runs), size)
					}
					for _, r := range p.Runs {
						got = append(got, r.ID)
					}
					if p.Next.IsZero() {
						break
					}
					if c, err := store.ParseCursor(p.Next.String()); err != nil || c != p.Next {
						t.Fatalf("cursor %q reads back as %+v %v", p.Next, c, err)
					}
					f.Before = p.Next
				}
				if !reflect.DeepEqual(got, all) {
					t.Errorf("device %q, pages of %d: %v\nwant %v", f.Device, size, got, all)
				}
			}
		}
	})
}

// TestDevicesPaged: the devices' pages walk them all by fleet and id, and
// DeviceCounts counts them.
func TestDevicesPaged(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		rng := rand.New(rand.NewPCG(32, 32))
		var batch []store.Incoming
		for _, fleet := range []string{"a", "b"} {
			for i := range 4 {
				r := storetest.FakeResult(rng, fleet, fmt.Sprintf("pi-%d", i), nil, time.Now(), 1000, 800)
				batch = append(batch, storetest.Incoming(t, r))
			}
		}
		if _, err := s.Ingest(ctx, batch); err != nil {
			t.Fatal(err)
		}
		whole, err := s.Devices(ctx)
		if err != nil || len(whole) != 8 {
			t.Fatalf("%d devices %v, want 8", len(whole), err)
		}
		var got []string
		var c store.DeviceCursor
		for {
			p, err := s.DevicesAfter(ctx, c, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range p.Devices {
				got = append(got, d.Fleet+"/"+d.ID)
			}
			if p.Next == (store.DeviceCursor{}) {
				break
			}
			if c, err = store.ParseDeviceCursor(p.Next.String()); err != nil {
				t.Fatal(err)
			}
		}
		var want []string
		for _, d := range whole {
			want = append(want, d.Fleet+"/"+d.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("paged %v, want %v", got, want)
		}
		if total, _, err := s.DeviceCounts(ctx); err != nil || total != 8 {
			t.Errorf("counted %d %v, want 8", total, err)
		}
	})
}
