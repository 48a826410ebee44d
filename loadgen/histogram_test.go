package loadgen

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestHistogramQuantilesWithinPrecision(t *testing.T) {
	h := NewLatencyHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, 100_000)
	for i := range vals {
		// Log-uniform from 1 us to 10 s: every bucket size is exercised.
		vals[i] = int64(math.Exp(rng.Float64() * math.Log(1e7)))
		h.Record(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
		exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
		got := h.Quantile(q)
		if rel := math.Abs(float64(got-exact)) / float64(exact); rel > 0.001 {
			t.Errorf("q%.3f = %d, exact %d: off by %.4f (3 digits allow 0.001)", q, got, exact, rel)
		}
	}
	if h.Min() != vals[0] || h.Max() != vals[len(vals)-1] || h.Count() != int64(len(vals)) {
		t.Errorf("min %d max %d count %d", h.Min(), h.Max(), h.Count())
	}
	var sum float64
	for _, v := range vals {
		sum += float64(v)
	}
	if mean := sum / float64(len(vals)); math.Abs(h.Mean()-mean)/mean > 0.001 {
		t.Errorf("mean %.1f, exact %.1f", h.Mean(), mean)
	}
}

func TestHistogramClampsAndMerges(t *testing.T) {
	a, b := NewLatencyHistogram(), NewLatencyHistogram()
	a.Record(-5)
	a.Record(120)
	b.Record(latencyMaxUS * 10)
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Count() != 3 || a.Min() != 0 || a.Max() != latencyMaxUS || a.Clamped() != 1 {
		t.Errorf("count %d min %d max %d clamped %d", a.Count(), a.Min(), a.Max(), a.Clamped())
	}
	if err := a.Merge(NewHistogram(1000, 2)); err != nil {
		t.Errorf("merging an empty histogram of another shape: %v", err)
	}
	other := NewHistogram(1000, 2)
	other.Record(5)
	if err := a.Merge(other); err == nil {
		t.Error("merged histograms of different shapes")
	}
}

func TestHistogramCompactRoundTrip(t *testing.T) {
	h := NewLatencyHistogram()
	for i := int64(1); i < 50_000; i += 7 {
		h.Record(i * i % 3_000_000)
	}
	b := h.AppendCompact(nil)
	g, err := DecodeHistogram(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range Percentiles {
		if g.Quantile(q/100) != h.Quantile(q/100) {
			t.Errorf("p%v: %d after the round trip, %d before", q, g.Quantile(q/100), h.Quantile(q/100))
		}
	}
	if g.Count() != h.Count() || g.Min() != h.Min() || g.Max() != h.Max() {
		t.Errorf("count/min/max %d/%d/%d, want %d/%d/%d", g.Count(), g.Min(), g.Max(), h.Count(), h.Min(), h.Max())
	}
	if len(b) > 16<<10 {
		t.Errorf("compact encoding of %d bytes", len(b))
	}
	empty, err := DecodeHistogram(NewLatencyHistogram().AppendCompact(nil))
	if err != nil || empty.Count() != 0 {
		t.Errorf("empty round trip: %v, count %d", err, empty.Count())
	}
}

func TestDecodeHistogramRejectsHostileInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":      {},
		"magic":      {0x00, 3, 1, 1, 1, 0},
		"digits":     {compactMagic, 9, 1, 1, 1, 0},
		"huge max":   append([]byte{compactMagic, 3}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0),
		"truncated":  {compactMagic, 3, 0x80},
		"bad index":  append(NewLatencyHistogram().AppendCompact(nil), 0xff, 0xff, 0x7f, 1),
		"zero count": append(NewLatencyHistogram().AppendCompact(nil), 1, 0),
		"index range": binary.AppendUvarint(binary.AppendUvarint(
			append(NewLatencyHistogram().AppendCompact(nil), 0xf0, 0x87, 0x01, 1), // index 17391 of 17408
			100), 1), // then 100 further
	} {
		if _, err := DecodeHistogram(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDecodeHistogram(f *testing.F) {
	h := NewLatencyHistogram()
	for _, v := range []int64{1, 10, 100, 1000, 10_000, 100_000, 59_000_000} {
		h.Record(v)
	}
	f.Add(h.AppendCompact(nil))
	f.Add(NewHistogram(latencyMaxUS, 2).AppendCompact(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := DecodeHistogram(b)
		if err != nil {
			return
		}
		// Whatever decodes must behave: re-encode and decode the same.
		again, err := DecodeHistogram(g.AppendCompact(nil))
		if err != nil {
			t.Fatalf("re-encoding of an accepted histogram fails: %v", err)
		}
		if again.Count() != g.Count() || again.Quantile(0.5) != g.Quantile(0.5) {
			t.Fatalf("round trip changed the histogram")
		}
	})
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := NewLatencyHistogram()
	b.ReportAllocs()
	for i := range b.N {
		h.Record(int64(i & 0xfffff))
	}
}
