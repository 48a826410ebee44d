package loadgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
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
	latencyMaxUS  = 60_000_000
	latencyDigits = 3
)

// NewHistogram returns a histogram for values 0..max with the given
// significant decimal digits (1 to 5).
func NewHistogram(max int64, digits int) *Histogram {
	if digits < 1 || digits > 5 {
		panic("loadgen: histogram digits out of range")
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
func NewLatencyHistogram() *Histogram { return NewHistogram(latencyMaxUS, latencyDigits) }

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
		return errors.New("loadgen: merge of histograms of different shapes")
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
	want := int64(math.Ceil(q * float64(h.total)))
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
	if h.total == 0 {
		return 0
	}
	var sum float64
	for i, c := range h.counts {
		if c != 0 {
			sum += float64(c) * h.mid(i)
		}
	}
	return sum / float64(h.total)
}

// StdDev is the population standard deviation of the recorded values.
func (h *Histogram) StdDev() float64 {
	if h.total == 0 {
		return 0
	}
	mean := h.Mean()
	var sum float64
	for i, c := range h.counts {
		if c != 0 {
			d := h.mid(i) - mean
			sum += float64(c) * d * d
		}
	}
	return math.Sqrt(sum / float64(h.total))
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

// compactMagic starts every compact encoding (and versions it).
const compactMagic = 0xEB

// AppendCompact appends a compact encoding of h to b: a header (magic,
// digits, max, min, max seen, clamped) and then, for each non-empty bucket,
// the gap in index from the previous one and the count, as uvarints. A
// latency histogram of a loopback run takes a few hundred bytes.
func (h *Histogram) AppendCompact(b []byte) []byte {
	b = append(b, compactMagic, byte(h.digits))
	b = binary.AppendUvarint(b, uint64(h.max))
	b = binary.AppendUvarint(b, uint64(h.Min()))
	b = binary.AppendUvarint(b, uint64(h.maxSeen))
	b = binary.AppendUvarint(b, uint64(h.clamped))
	prev := -1
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		b = binary.AppendUvarint(b, uint64(i-prev))
		b = binary.AppendUvarint(b, uint64(c))
		prev = i
	}
	return b
}

// Limits of DecodeHistogram: the largest maximum value and digits it accepts.
const (
	decodeMaxValue  = int64(1) << 40
	decodeMaxDigits = 4
)

// DecodeHistogram rebuilds a histogram from AppendCompact's encoding. It
// rejects malformed input with an error, and refuses shapes whose memory
// would be large (more than 4 significant digits or a maximum above 2^40).
func DecodeHistogram(b []byte) (*Histogram, error) {
	if len(b) < 2 || b[0] != compactMagic {
		return nil, errors.New("histogram: bad header")
	}
	digits := int(b[1])
	if digits < 1 || digits > decodeMaxDigits {
		return nil, fmt.Errorf("histogram: %d significant digits not supported", digits)
	}
	b = b[2:]
	var hdr [4]uint64
	for i := range hdr {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("histogram: truncated header")
		}
		hdr[i], b = v, b[n:]
	}
	if hdr[0] < 2 || hdr[0] > uint64(decodeMaxValue) {
		return nil, fmt.Errorf("histogram: maximum %d out of range", hdr[0])
	}
	h := NewHistogram(int64(hdr[0]), digits)
	idx := -1
	for len(b) > 0 {
		gap, n := binary.Uvarint(b)
		if n <= 0 || gap == 0 || gap > uint64(len(h.counts)) {
			return nil, errors.New("histogram: bad bucket index")
		}
		b = b[n:]
		c, n := binary.Uvarint(b)
		if n <= 0 || c == 0 || c > math.MaxInt64/2 {
			return nil, errors.New("histogram: bad bucket count")
		}
		b = b[n:]
		idx += int(gap)
		if idx >= len(h.counts) {
			return nil, errors.New("histogram: bucket index out of range")
		}
		h.counts[idx] = int64(c)
		h.total += int64(c)
		if h.total < 0 || h.total > math.MaxInt64/2 {
			return nil, errors.New("histogram: count overflow")
		}
	}
	if h.total > 0 {
		h.min, h.maxSeen = int64(hdr[1]), int64(hdr[2])
		if h.min > h.maxSeen || h.maxSeen > h.max {
			return nil, errors.New("histogram: min/max out of range")
		}
	}
	h.clamped = int64(hdr[3])
	if h.clamped > h.total {
		return nil, errors.New("histogram: clamped count above total")
	}
	return h, nil
}
