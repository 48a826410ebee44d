package report

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// This file is the histogram's compact encodings, which the wire carries
// (AppendCompact, AppendPacked), and their decoder (DecodeHistogram).

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
