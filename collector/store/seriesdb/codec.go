package seriesdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/edgebench/edgebench/collector/stats"
)

// The series state as the series table's state column keeps it: a
// version byte, then varints, strings as a length and their bytes,
// float64 as 8 bytes little-endian. Each result rewrites its series'
// state, so it is compact (about 5 KiB for a long series with three
// figures, where JSON took twice that and five times as long to read).
const stateVersion = 1

// encodeState appends the encoding of st to b.
func encodeState(b []byte, st *seriesState) []byte {
	b = append(b, stateVersion)
	b = binary.AppendVarint(b, st.Seq)
	b = binary.AppendUvarint(b, uint64(st.Check))
	b = binary.AppendUvarint(b, uint64(len(st.Points)))
	for i, p := range st.Points {
		b = binary.AppendVarint(b, p.Seq)
		b = appendString(b, p.ID)
		b = binary.AppendVarint(b, p.Started)
		var flags byte
		if p.Thr {
			flags |= 1
		}
		if i >= st.Check && p.Out == nil {
			flags |= 2 // its values: a late result replays it
		}
		if p.Out != nil {
			flags |= 4
		}
		b = append(b, flags)
		if flags&2 != 0 {
			for _, v := range p.V {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
		}
		if flags&4 != 0 {
			keys := make([]string, 0, len(p.Out))
			for k := range p.Out {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = binary.AppendUvarint(b, uint64(len(keys)))
			for _, k := range keys {
				b = appendString(b, k)
				b = binary.AppendUvarint(b, uint64(p.Out[k]))
			}
		}
	}
	for _, ds := range [][nMetrics]stats.Detector{st.C, st.S} {
		for i := range ds {
			b = appendDetector(b, &ds[i])
		}
	}
	for _, es := range st.Emitted {
		b = binary.AppendUvarint(b, uint64(len(es)))
		for _, e := range es {
			b = binary.AppendVarint(b, e.Lo)
			b = binary.AppendVarint(b, e.At)
			b = binary.AppendVarint(b, e.Last)
			b = binary.AppendUvarint(b, uint64(e.N))
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendDetector(b []byte, d *stats.Detector) []byte {
	for _, v := range []int{d.N, d.Start, d.K, d.Off} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	if d.Pending {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(d.Vals)))
	for _, v := range d.Vals {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	prev := int64(0)
	for _, r := range d.Refs { // mostly one apart
		b = binary.AppendVarint(b, r-prev)
		prev = r
	}
	return b
}

// errState says a stored state does not read back.
var errState = errors.New("series state: malformed")

// stateReader reads what encodeState wrote; the first error sticks.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) fail() {
	if r.err == nil {
		r.err = errState
	}
	r.b = nil
}

func (r *stateReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length or index, at most max.
func (r *stateReader) count(max int) int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(max) {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *stateReader) byte1() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *stateReader) float() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *stateReader) str() string {
	n := r.count(len(r.b))
	if r.err != nil {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// decodeState reads a state encodeState wrote, checking that what the
// detectors index is there: a state that does not read back is an error,
// never a panic later.
func decodeState(b []byte, o stats.DetectOptions) (*seriesState, error) {
	r := &stateReader{b: b}
	if v := r.byte1(); v != stateVersion {
		return nil, fmt.Errorf("%w: version %d", errState, v)
	}
	const big = 1 << 40
	st := &seriesState{Seq: r.varint()}
	st.Check = r.count(big)
	st.Points = make([]point, r.count(len(b)))
	for i := range st.Points {
		p := &st.Points[i]
		p.Seq, p.ID, p.Started = r.varint(), r.str(), r.varint()
		flags := r.byte1()
		p.Thr = flags&1 != 0
		if flags&2 != 0 {
			for m := range p.V {
				p.V[m] = r.float()
			}
		}
		if flags&4 != 0 {
			p.Out = map[string]int{}
			for range r.count(len(r.b)) {
				k := r.str()
				p.Out[k] = r.count(big)
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if st.Check > len(st.Points) {
		return nil, fmt.Errorf("%w: checkpoint past the points", errState)
	}
	for _, ds := range []*[nMetrics]stats.Detector{&st.C, &st.S} {
		for i := range ds {
			d := &ds[i]
			d.N, d.Start, d.K, d.Off = r.count(big), r.count(big), r.count(big), r.count(big)
			d.Pending = r.byte1() == 1
			n := r.count(len(r.b) / 8)
			if r.err != nil {
				return nil, r.err
			}
			d.Vals = make([]float64, n)
			for j := range d.Vals {
				d.Vals[j] = r.float()
			}
			d.Refs = make([]int64, n)
			prev := int64(0)
			for j := range d.Refs {
				prev += r.varint()
				d.Refs[j] = prev
			}
			if r.err != nil {
				return nil, r.err
			}
			if err := d.Check(o); err != nil {
				return nil, fmt.Errorf("%w: %v", errState, err)
			}
		}
	}
	for m := range st.Emitted {
		st.Emitted[m] = make([]emitted, r.count(len(r.b)))
		for j := range st.Emitted[m] {
			e := &st.Emitted[m][j]
			e.Lo, e.At, e.Last, e.N = r.varint(), r.varint(), r.varint(), r.count(big)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) > 0 {
		return nil, fmt.Errorf("%w: %d bytes left", errState, len(r.b))
	}
	return st, nil
}
