package summary

import (
	"github.com/tinylib/msgp/msgp"
)

// Of is payload, a result's msgpack as it came, without the bulk
// --keep-samples prunes: each run's timeline (tl), histograms (hl, hc,
// hw, hp, hh) and probe samples (sy.s). Everything else is kept byte for
// byte, in its order, fields this collector does not know included (a
// newer device's, for a newer collector to read). It is nil when payload
// has none of them: the payload is its own summary.
//
// Each byte of the payload is read once: a value is skipped only when it
// is kept or dropped whole, never before its own entries are filtered.
func Of(payload []byte) ([]byte, error) {
	out, _, stripped, err := filterMap(payload, func(key, b []byte) ([]byte, []byte, bool, error) {
		if string(key) != "rs" {
			return keep(b)
		}
		return filterArray(b, stripRun)
	})
	if err != nil || !stripped {
		return nil, err
	}
	return out, nil
}

// A filter reads the msgpack value at the start of b and returns it
// rewritten (nil: dropped), the bytes after it, and whether it changed;
// an entryFilter does so for the value of a map's entry of key.
type (
	filter      = func(b []byte) (val, rest []byte, changed bool, err error)
	entryFilter = func(key, b []byte) (val, rest []byte, changed bool, err error)
)

// keep is the value at the start of b as it is.
func keep(b []byte) ([]byte, []byte, bool, error) {
	end, err := msgp.Skip(b)
	return b[:len(b)-len(end)], end, false, err
}

// drop drops the value at the start of b.
func drop(b []byte) ([]byte, []byte, bool, error) {
	end, err := msgp.Skip(b)
	return nil, end, true, err
}

// runBulk are the keys of a wire.Run that --keep-samples prunes.
var runBulk = map[string]bool{"tl": true, "hl": true, "hc": true, "hw": true, "hp": true, "hh": true}

// stripRun is a run's msgpack without its bulk.
func stripRun(b []byte) ([]byte, []byte, bool, error) {
	return filterMap(b, func(key, b []byte) ([]byte, []byte, bool, error) {
		switch {
		case runBulk[string(key)]:
			return drop(b)
		case string(key) == "sy":
			return filterMap(b, func(key, b []byte) ([]byte, []byte, bool, error) {
				if string(key) == "s" {
					return drop(b)
				}
				return keep(b)
			})
		}
		return keep(b)
	})
}

// filterMap rewrites the msgpack map at the start of b (nil: kept as it
// is) with each value replaced by f's (nil: the entry dropped), and says
// whether f changed any.
func filterMap(b []byte, f entryFilter) ([]byte, []byte, bool, error) {
	if msgp.IsNil(b) {
		return keep(b)
	}
	n, rest, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return nil, nil, false, err
	}
	var body []byte
	kept, changed := uint32(0), false
	for range n {
		key, after, err := msgp.ReadMapKeyZC(rest)
		if err != nil {
			return nil, nil, false, err
		}
		val, end, ch, err := f(key, after)
		if err != nil {
			return nil, nil, false, err
		}
		changed = changed || ch
		if val != nil {
			body = append(body, rest[:len(rest)-len(after)]...)
			body = append(body, val...)
			kept++
		}
		rest = end
	}
	return append(msgp.AppendMapHeader(nil, kept), body...), rest, changed, nil
}

// filterArray rewrites each element of the msgpack array at the start of
// b (nil: kept as it is) with f's, and says whether f changed any.
func filterArray(b []byte, f filter) ([]byte, []byte, bool, error) {
	if msgp.IsNil(b) {
		return keep(b)
	}
	n, rest, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return nil, nil, false, err
	}
	out := msgp.AppendArrayHeader(nil, n)
	changed := false
	for range n {
		elem, end, ch, err := f(rest)
		if err != nil {
			return nil, nil, false, err
		}
		out = append(out, elem...)
		changed = changed || ch
		rest = end
	}
	return out, rest, changed, nil
}
