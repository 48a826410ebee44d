package report

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
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
	mean := sum / float64(len(vals))
	if math.Abs(h.Mean()-mean)/mean > 0.001 {
		t.Errorf("mean %.1f, exact %.1f", h.Mean(), mean)
	}
	var sq float64
	for _, v := range vals {
		sq += (float64(v) - mean) * (float64(v) - mean)
	}
	if sd := math.Sqrt(sq / float64(len(vals))); math.Abs(h.StdDev()-sd)/sd > 0.001 {
		t.Errorf("standard deviation %.1f, exact %.1f", h.StdDev(), sd)
	}
	if m, sd := h.MeanStdDev(); m != h.Mean() || sd != h.StdDev() {
		t.Errorf("MeanStdDev %v %v, Mean and StdDev %v %v", m, sd, h.Mean(), h.StdDev())
	}
}

// The standard deviation reads the buckets between the first and the
// last counted: values at both ends of the range count.
func TestHistogramStdDevOfTheEnds(t *testing.T) {
	h := NewLatencyHistogram()
	if m, sd := h.MeanStdDev(); m != 0 || sd != 0 {
		t.Errorf("empty: %v %v, want 0 0", m, sd)
	}
	h.Record(0)
	h.Record(MaxLatencyUS)
	mid := float64(MaxLatencyUS) / 2
	if m, sd := h.MeanStdDev(); math.Abs(m-mid)/mid > 0.001 || math.Abs(sd-mid)/mid > 0.001 {
		t.Errorf("0 and %d: mean %v, deviation %v, want both %v", MaxLatencyUS, m, sd, mid)
	}
}

func TestHistogramClampsAndMerges(t *testing.T) {
	a, b := NewLatencyHistogram(), NewLatencyHistogram()
	a.Record(-5)
	a.Record(120)
	b.Record(MaxLatencyUS * 10)
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Count() != 3 || a.Min() != 0 || a.Max() != MaxLatencyUS || a.Clamped() != 1 {
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

// TestDecodeHistogramInto: a histogram decoded into one of the same
// shape that held other values is the one decoded fresh, in the same
// memory; into one of another shape, or nil, it is a new one.
func TestDecodeHistogramInto(t *testing.T) {
	busy := busyHistogram(3)
	b := busy.AppendPacked(nil)
	want, err := DecodeHistogram(b)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewLatencyHistogram()
	for v := int64(1); v < 10_000_000; v *= 3 {
		dst.Record(v)
	}
	got, err := DecodeHistogramInto(dst, b)
	if err != nil {
		t.Fatal(err)
	}
	if got != dst {
		t.Error("a histogram of the same shape was not reused")
	}
	sameHistogram(t, "into a used histogram", got, want)
	other := NewHistogram(MaxLatencyUS, 2)
	if got, err := DecodeHistogramInto(other, b); err != nil || got == other {
		t.Errorf("into a 2-digit histogram: %v, reused %v", err, got == other)
	} else {
		sameHistogram(t, "into another shape", got, want)
	}
	if got, err := DecodeHistogramInto(nil, b); err != nil {
		t.Error(err)
	} else {
		sameHistogram(t, "into nil", got, want)
	}
	if _, err := DecodeHistogramInto(dst, b[:len(b)/2]); err == nil {
		t.Error("a truncated histogram decoded")
	}
}

// busyHistogram is a 3-digit latency histogram of a busy run: 400,000
// values around 3.6 ms with a long tail.
func busyHistogram(digits int) *Histogram {
	h := NewHistogram(MaxLatencyUS, digits)
	r := rand.New(rand.NewPCG(1, 7))
	for range 400_000 {
		h.Record(int64(3600 * (0.5 + r.ExpFloat64())))
	}
	return h
}

func sameHistogram(t *testing.T, what string, g, h *Histogram) {
	t.Helper()
	if !slices.Equal(g.counts, h.counts) || g.Count() != h.Count() || g.Min() != h.Min() || g.Max() != h.Max() || g.clamped != h.clamped {
		t.Errorf("%s: count/min/max %d/%d/%d, want %d/%d/%d (buckets equal: %v)", what,
			g.Count(), g.Min(), g.Max(), h.Count(), h.Min(), h.Max(), slices.Equal(g.counts, h.counts))
	}
}

// TestHistogramPacked: the packed form decodes to the same histogram and
// is smaller than the plain one, which is smaller than version 1's; a
// version 1 encoding still decodes.
func TestHistogramPacked(t *testing.T) {
	h := busyHistogram(3)
	h.Record(MaxLatencyUS * 2) // clamped
	plain, packed := h.AppendCompact(nil), h.AppendPacked([]byte("prefix"))
	if string(packed[:6]) != "prefix" {
		t.Fatalf("AppendPacked lost what it appended to")
	}
	packed = packed[6:]
	v1 := appendV1(h)
	t.Logf("busy 3-digit histogram: version 1 %d bytes, plain %d, packed %d", len(v1), len(plain), len(packed))
	if !(len(packed) < len(plain) && len(plain) < len(v1)) {
		t.Errorf("sizes: packed %d, plain %d, version 1 %d: want each smaller than the next", len(packed), len(plain), len(v1))
	}
	for name, b := range map[string][]byte{"plain": plain, "packed": packed, "version 1": v1} {
		g, err := DecodeHistogram(b)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		sameHistogram(t, name, g, h)
	}
	// A small histogram is not worth deflating.
	small := NewLatencyHistogram()
	small.Record(100)
	if p, c := small.AppendPacked(nil), small.AppendCompact(nil); !bytes.Equal(p, c) {
		t.Errorf("small histogram packed to %d bytes, plain %d", len(p), len(c))
	}
}

// appendV1 is the version 1 encoding, which stores may still hold.
func appendV1(h *Histogram) []byte {
	b := []byte{compactMagicV1, byte(h.digits)}
	for _, v := range []int64{h.max, h.Min(), h.maxSeen, h.clamped} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	prev := -1
	for i, c := range h.counts {
		if c != 0 {
			b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(i-prev)), uint64(c))
			prev = i
		}
	}
	return b
}

// TestHistogramCoarsen: fewer digits keep the count, min and max, and the
// quantiles within the coarser precision.
func TestHistogramCoarsen(t *testing.T) {
	h := busyHistogram(3)
	g := h.Coarsen(2)
	if g.digits != 2 || g.Count() != h.Count() || g.Min() != h.Min() || g.Max() != h.Max() {
		t.Fatalf("coarsened: digits %d count %d min %d max %d; from count %d min %d max %d",
			g.digits, g.Count(), g.Min(), g.Max(), h.Count(), h.Min(), h.Max())
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		a, b := float64(h.Quantile(q)), float64(g.Quantile(q))
		if math.Abs(a-b)/a > 0.01 {
			t.Errorf("p%v: %v with 2 digits, %v with 3", q*100, b, a)
		}
	}
	if len(g.AppendCompact(nil)) >= len(h.AppendCompact(nil))/4 {
		t.Errorf("2 digits encode to %d bytes, 3 to %d", len(g.AppendCompact(nil)), len(h.AppendCompact(nil)))
	}
	same := h.Coarsen(3)
	sameHistogram(t, "Coarsen(3)", same, h)
	same.Record(1)
	if same.Count() == h.Count() {
		t.Error("Coarsen(3) shares its buckets with the original")
	}
}

func TestDecodeHistogramRejectsHostileInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":      {},
		"magic":      {0x00, 3, 1, 1, 1, 0},
		"digits":     {compactMagic, 9, 1, 1, 1, 0},
		"huge max":   append([]byte{compactMagic, 3}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0),
		"truncated":  {compactMagic, 3, 0, 0x80},
		"flags":      {compactMagic, 3, 0x80, 2, 0, 0, 0},
		"deflate":    {compactMagic, 3, flagDeflate, 2, 0, 0, 0, 0xff, 0xff},
		"bomb":       deflateBomb(),
		"v1 zero":    {compactMagicV1, 3, 2, 0, 0, 0, 1, 0},
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

// deflateBomb is a packed histogram whose body inflates to 4 MB of zeros,
// far beyond what any histogram of its shape needs.
func deflateBomb() []byte {
	var buf bytes.Buffer
	buf.Write([]byte{compactMagic, 3, flagDeflate, 0x80, 0x80, 0x80, 0x01, 0, 0, 0})
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 4 {
		w.Write(zeros)
	}
	w.Close()
	return buf.Bytes()
}

func FuzzDecodeHistogram(f *testing.F) {
	h := NewLatencyHistogram()
	for _, v := range []int64{1, 10, 100, 1000, 10_000, 100_000, 59_000_000} {
		h.Record(v)
	}
	f.Add(h.AppendCompact(nil))
	f.Add(NewHistogram(MaxLatencyUS, 2).AppendCompact(nil))
	f.Add(busyHistogram(2).AppendPacked(nil))
	f.Add(appendV1(h))
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

func BenchmarkHistogramEncode(b *testing.B) {
	h := busyHistogram(3)
	for _, c := range []struct {
		name string
		enc  func([]byte) []byte
	}{{"compact", h.AppendCompact}, {"packed", h.AppendPacked}} {
		b.Run(c.name, func(b *testing.B) {
			buf := c.enc(nil)
			b.ReportMetric(float64(len(buf)), "bytes")
			b.ReportAllocs()
			for b.Loop() {
				buf = c.enc(buf[:0])
			}
		})
	}
	b.Run("decode-packed", func(b *testing.B) {
		buf := h.AppendPacked(nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeHistogram(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
