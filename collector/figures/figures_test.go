package figures_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// BenchmarkFigures: the figures of one run, as the collector computes them
// for each run it stores (the latency histogram decoded for its mean, p50,
// p99 and maximum), from several goroutines as the handlers do.
func BenchmarkFigures(b *testing.B) {
	r := storetest.FakeResult(rand.New(rand.NewPCG(1, 2)), "lab", "pi-1", nil, time.Now(), 1000, 800)
	run, fp := &r.Runs[0], r.Fingerprint
	if f := figures.Of(run, fp); f.P50US != f.P50US {
		b.Fatal("no latency figures")
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			figures.Of(run, fp)
		}
	})
}
