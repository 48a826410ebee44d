package report

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync"
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

// The compact encodings start with a magic byte that versions them.
// Version 1 (still decoded) stored each non-empty bucket as a uvarint
// index gap and a uvarint count. Version 2 stores runs, and may deflate
// them.
const (
	compactMagicV1 = 0xEB
	compactMagic   = 0xEC

	flagDeflate = 1 // the body is raw DEFLATE (Huffman only)
)

// AppendCompact appends a compact encoding of h to b: a header (magic,
// digits, flags, then max, min, max seen and clamped as uvarints) and a
// body of runs. Each run is the number of empty buckets skipped, the
// number of non-empty buckets that follow, and their counts as zigzag
// varint differences from the previous count. Neighbouring buckets of a
// latency histogram hold similar counts, so most take one byte.
func (h *Histogram) AppendCompact(b []byte) []byte {
	b = h.appendHeader(b, 0)
	return h.appendRuns(b)
}

func (h *Histogram) appendHeader(b []byte, flags byte) []byte {
	b = append(b, compactMagic, byte(h.digits), flags)
	b = binary.AppendUvarint(b, uint64(h.max))
	b = binary.AppendUvarint(b, uint64(h.Min()))
	b = binary.AppendUvarint(b, uint64(h.maxSeen))
	return binary.AppendUvarint(b, uint64(h.clamped))
}

func (h *Histogram) appendRuns(b []byte) []byte {
	n := len(h.counts)
	for i := 0; i < n; {
		start := i
		for i < n && h.counts[i] == 0 {
			i++
		}
		if i == n {
			break
		}
		run := i
		for i < n && h.counts[i] != 0 {
			i++
		}
		b = binary.AppendUvarint(b, uint64(run-start))
		b = binary.AppendUvarint(b, uint64(i-run))
		prev := int64(0)
		for _, c := range h.counts[run:i] {
			b = binary.AppendVarint(b, c-prev)
			prev = c
		}
	}
	return b
}

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.HuffmanOnly)
	return w
}}

// AppendPacked is AppendCompact with the runs Huffman-coded (DEFLATE)
// when that is smaller: about 0.7x for a 3-digit latency histogram of a
// busy run. It is for the wire and the store; AppendCompact is cheaper.
func (h *Histogram) AppendPacked(b []byte) []byte {
	start := len(b)
	b = h.appendHeader(b, 0)
	bodyAt := len(b)
	b = h.appendRuns(b)
	if len(b)-bodyAt < 64 {
		return b
	}
	var buf bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	_, err := w.Write(b[bodyAt:])
	if err == nil {
		err = w.Close()
	}
	deflaters.Put(w)
	if err != nil || buf.Len() >= len(b)-bodyAt {
		return b
	}
	b[start+2] = flagDeflate
	return append(b[:bodyAt], buf.Bytes()...)
}

// Limits of DecodeHistogram: the largest maximum value and digits it accepts.
const (
	decodeMaxValue  = int64(1) << 40
	decodeMaxDigits = 4
)

// DecodeHistogram rebuilds a histogram from AppendCompact's or
// AppendPacked's encoding (either version). It rejects malformed input
// with an error, and refuses shapes whose memory would be large (more
// than 4 significant digits or a maximum above 2^40).
func DecodeHistogram(b []byte) (*Histogram, error) { return DecodeHistogramInto(nil, b) }

// DecodeHistogramInto decodes b as DecodeHistogram does, into dst's memory
// when dst (which may be nil) has the maximum and digits b was encoded
// with, and into a new histogram otherwise; it returns the histogram
// decoded. A consumer that decodes many histograms for their figures
// keeps one (or a pool) instead of allocating the buckets each time.
func DecodeHistogramInto(dst *Histogram, b []byte) (*Histogram, error) {
	if len(b) < 2 || (b[0] != compactMagic && b[0] != compactMagicV1) {
		return nil, errors.New("histogram: bad header")
	}
	version := 2
	if b[0] == compactMagicV1 {
		version = 1
	}
	digits := int(b[1])
	if digits < 1 || digits > decodeMaxDigits {
		return nil, fmt.Errorf("histogram: %d significant digits not supported", digits)
	}
	b = b[2:]
	var flags byte
	if version == 2 {
		if len(b) == 0 || b[0]&^flagDeflate != 0 {
			return nil, errors.New("histogram: bad flags")
		}
		flags, b = b[0], b[1:]
	}
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
	h := dst
	if h != nil && h.max == int64(hdr[0]) && h.digits == digits {
		h.Reset()
	} else {
		h = NewHistogram(int64(hdr[0]), digits)
	}
	var err error
	switch {
	case version == 1:
		err = h.decodeV1(b)
	case flags&flagDeflate != 0:
		// Every bucket in a run of its own, with the largest count,
		// bounds the plain body.
		limit := int64(len(h.counts))*(2*binary.MaxVarintLen64) + 16
		var plain []byte
		plain, err = io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(b)), limit+1))
		switch {
		case err != nil:
			err = fmt.Errorf("histogram: %w", err)
		case int64(len(plain)) > limit:
			err = errors.New("histogram: packed body too large")
		default:
			err = h.decodeRuns(plain)
		}
	default:
		err = h.decodeRuns(b)
	}
	if err != nil {
		return nil, err
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

// add sets bucket idx to c, keeping the total sane.
func (h *Histogram) add(idx int, c int64) error {
	if c <= 0 || c > math.MaxInt64/2 {
		return errors.New("histogram: bad bucket count")
	}
	h.counts[idx] = c
	h.total += c
	if h.total < 0 || h.total > math.MaxInt64/2 {
		return errors.New("histogram: count overflow")
	}
	return nil
}

func (h *Histogram) decodeV1(b []byte) error {
	idx := -1
	for len(b) > 0 {
		gap, n := binary.Uvarint(b)
		if n <= 0 || gap == 0 || gap > uint64(len(h.counts)) {
			return errors.New("histogram: bad bucket index")
		}
		b = b[n:]
		c, n := binary.Uvarint(b)
		if n <= 0 || c > math.MaxInt64/2 {
			return errors.New("histogram: bad bucket count")
		}
		b = b[n:]
		idx += int(gap)
		if idx >= len(h.counts) {
			return errors.New("histogram: bucket index out of range")
		}
		if err := h.add(idx, int64(c)); err != nil {
			return err
		}
	}
	return nil
}

func (h *Histogram) decodeRuns(b []byte) error {
	idx, n := 0, uint64(len(h.counts))
	for len(b) > 0 {
		skip, k := binary.Uvarint(b)
		if k <= 0 || skip > n-uint64(idx) {
			return errors.New("histogram: bad run")
		}
		b = b[k:]
		run, k := binary.Uvarint(b)
		if k <= 0 || run == 0 || run > n-uint64(idx)-skip {
			return errors.New("histogram: bad run length")
		}
		b = b[k:]
		idx += int(skip)
		prev := int64(0)
		for range run {
			d, k := binary.Varint(b)
			if k <= 0 || (d > 0 && prev > math.MaxInt64/2-d) {
				return errors.New("histogram: bad bucket count")
			}
			b = b[k:]
			prev += d
			if err := h.add(idx, prev); err != nil {
				return err
			}
			idx++
		}
	}
	return nil
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
