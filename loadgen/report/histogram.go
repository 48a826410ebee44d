package report

import (
	"errors"
	"math"
	"math/bits"
	"slices"
)

// Histogram is a high-dynamic-range histogram of non-negative integer values
// (microseconds in this package). Values up to the histogram's maximum keep
// the configured number of significant decimal digits; larger values are
// clamped to the maximum and counted.
//
// Recording is a few arithmetic operations and one increment: no allocation.
// A Histogram is not safe for concurrent use: keep one per worker and Merge.
type Histogram struct {
	digits        int
	max           int64
	subBucketBits uint  // log2(subBucketCount)
	subBucketHalf int   // subBucketCount / 2
	subBucketMask int64 // subBucketCount - 1
	counts        []int64
	total         int64
	min, maxSeen  int64
	clamped       int64
}

// Latency histograms cover 1 µs to 60 s with 3 significant digits.
const (
	// MaxLatencyUS is the largest value of a latency histogram: 60 s.
	MaxLatencyUS  = 60_000_000
	latencyDigits = 3
)

// NewHistogram returns a histogram for values 0..max with the given
// significant decimal digits (1 to 5).
func NewHistogram(max int64, digits int) *Histogram {
	if digits < 1 || digits > 5 {
		panic("histogram: digits out of range")
	}
	if max < 2 {
		max = 2
	}
	largest := int64(2 * math.Pow10(digits))
	subBits := uint(bits.Len64(uint64(largest - 1)))
	subCount := int64(1) << subBits
	// Buckets double the range each time; bucket 0 covers 0..subCount-1.
	buckets := 1
	for top := subCount; top <= max; top <<= 1 {
		buckets++
	}
	h := &Histogram{
		digits:        digits,
		max:           max,
		subBucketBits: subBits,
		subBucketHalf: int(subCount / 2),
		subBucketMask: subCount - 1,
	}
	h.counts = make([]int64, (buckets+1)*h.subBucketHalf)
	h.Reset()
	return h
}

// NewLatencyHistogram returns a histogram of 1 µs to 60 s, 3 significant digits.
func NewLatencyHistogram() *Histogram { return NewHistogram(MaxLatencyUS, latencyDigits) }

// Reset empties the histogram, keeping its memory.
func (h *Histogram) Reset() {
	clear(h.counts)
	h.total, h.clamped = 0, 0
	h.min, h.maxSeen = math.MaxInt64, 0
}

func (h *Histogram) index(v int64) int {
	// The bucket is how many times the value must be halved to fit in
	// the sub-bucket range.
	b := bits.Len64(uint64(v|h.subBucketMask)) - int(h.subBucketBits)
	sub := int(v >> uint(b))
	return (b+1)*h.subBucketHalf + sub - h.subBucketHalf
}

// valueAt is the lowest value that maps to index i.
func (h *Histogram) valueAt(i int) int64 {
	b := i/h.subBucketHalf - 1
	sub := i%h.subBucketHalf + h.subBucketHalf
	if b < 0 {
		b, sub = 0, sub-h.subBucketHalf
	}
	return int64(sub) << uint(b)
}

// highestEquivalent is the highest value that maps to the same index as v.
func (h *Histogram) highestEquivalent(i int) int64 {
	b := i/h.subBucketHalf - 1
	if b < 0 {
		b = 0
	}
	return h.valueAt(i) + (int64(1) << uint(b)) - 1
}

// Record adds one value. Negative values count as 0; values above the
// maximum count as the maximum.
func (h *Histogram) Record(v int64) {
	if v < 0 {
		v = 0
	}
	if v > h.max {
		v = h.max
		h.clamped++
	}
	h.counts[h.index(v)]++
	h.total++
	if v < h.min {
		h.min = v
	}
	if v > h.maxSeen {
		h.maxSeen = v
	}
}

// Merge adds every value of o (which must have the same shape) to h.
func (h *Histogram) Merge(o *Histogram) error {
	if o == nil || o.total == 0 {
		return nil
	}
	if o.digits != h.digits || len(o.counts) != len(h.counts) {
		return errors.New("histogram: merge of histograms of different shapes")
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.clamped += o.clamped
	h.min = min(h.min, o.min)
	h.maxSeen = max(h.maxSeen, o.maxSeen)
	return nil
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.total }

// Clamped is how many values were above the maximum and recorded as it.
func (h *Histogram) Clamped() int64 { return h.clamped }

// Min is the smallest recorded value, 0 when empty.
func (h *Histogram) Min() int64 {
	if h.total == 0 {
		return 0
	}
	return h.min
}

// Max is the largest recorded value, 0 when empty.
func (h *Histogram) Max() int64 { return h.maxSeen }

// Quantile returns the value at quantile q (0..1): the highest value
// equivalent to the bucket that holds the q-th recorded value, capped by the
// true maximum, as HdrHistogram reports it.
func (h *Histogram) Quantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	// The rank is ceil(q x total), with the product taken a part in 10^12
	// low: 99.9/100 x 1000 is 999.0000000000001 in floats, and the 99.9th
	// percentile of 1,000 values is the 999th (HdrHistogram steps its
	// percentile down by an ulp for the same reason).
	want := int64(math.Ceil(q * float64(h.total) * (1 - 1e-12)))
	if want < 1 {
		want = 1
	}
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= want {
			return min(h.highestEquivalent(i), h.maxSeen)
		}
	}
	return h.maxSeen
}

// Mean is the mean of the recorded values, from bucket midpoints.
func (h *Histogram) Mean() float64 {
	mean, _, _ := h.meanSpan()
	return mean
}

// StdDev is the population standard deviation of the recorded values.
func (h *Histogram) StdDev() float64 {
	_, sd := h.MeanStdDev()
	return sd
}

// MeanStdDev is Mean and StdDev at the cost of one pass over the buckets
// (the second reads only those between the first and the last counted),
// which the collector takes for every run it stores.
func (h *Histogram) MeanStdDev() (mean, stddev float64) {
	mean, lo, hi := h.meanSpan()
	if h.total == 0 {
		return 0, 0
	}
	var sum float64
	for i, c := range h.counts[lo : hi+1] {
		if c != 0 {
			d := h.mid(lo+i) - mean
			sum += float64(c) * d * d
		}
	}
	return mean, math.Sqrt(sum / float64(h.total))
}

// meanSpan is the mean and the indexes of the first and the last
// bucket with a count (0 and -1 when there is none).
func (h *Histogram) meanSpan() (mean float64, lo, hi int) {
	if h.total == 0 {
		return 0, 0, -1
	}
	var sum float64
	lo, hi = -1, -1
	for i, c := range h.counts {
		if c != 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
			sum += float64(c) * h.mid(i)
		}
	}
	if lo < 0 {
		return 0, 0, -1
	}
	return sum / float64(h.total), lo, hi
}

func (h *Histogram) mid(i int) float64 {
	lo, hi := h.valueAt(i), h.highestEquivalent(i)
	return float64(lo) + float64(hi-lo)/2
}

// ForEach calls fn for each non-empty bucket with the lowest value of the
// bucket and its count, in increasing order.
func (h *Histogram) ForEach(fn func(value, count int64)) {
	for i, c := range h.counts {
		if c != 0 {
			fn(h.valueAt(i), c)
		}
	}
}

// Digits is the number of significant digits h keeps.
func (h *Histogram) Digits() int { return h.digits }

// Coarsen returns a copy of h with fewer significant digits (the same if
// digits is not fewer): buckets of the copy cover whole buckets of h, so
// counts move without error beyond the coarser precision.
func (h *Histogram) Coarsen(digits int) *Histogram {
	if digits >= h.digits {
		g := *h
		g.counts = slices.Clone(h.counts)
		return &g
	}
	g := NewHistogram(h.max, digits)
	for i, c := range h.counts {
		if c != 0 {
			g.counts[g.index(h.valueAt(i))] += c
		}
	}
	g.total, g.clamped, g.min, g.maxSeen = h.total, h.clamped, h.min, h.maxSeen
	return g
}
