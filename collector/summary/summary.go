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
func Of(payload []byte) ([]byte, error) {
	out, stripped, err := filterMap(payload, func(key string, val []byte) ([]byte, bool, error) {
		if key != "rs" {
			return val, false, nil
		}
		return filterArray(val, stripRun)
	})
	if err != nil || !stripped {
		return nil, err
	}
	return out, nil
}

// runBulk are the keys of a wire.Run that --keep-samples prunes.
var runBulk = map[string]bool{"tl": true, "hl": true, "hc": true, "hw": true, "hp": true, "hh": true}

// stripRun is a run's msgpack without its bulk.
func stripRun(run []byte) ([]byte, bool, error) {
	return filterMap(run, func(key string, val []byte) ([]byte, bool, error) {
		switch {
		case runBulk[key]:
			return nil, true, nil
		case key == "sy":
			return filterMap(val, func(key string, val []byte) ([]byte, bool, error) {
				if key == "s" {
					return nil, true, nil
				}
				return val, false, nil
			})
		}
		return val, false, nil
	})
}

// filterMap rewrites the msgpack map at the start of b (nil: kept as it
// is) with each value replaced by f's (nil: the entry dropped), and says
// whether f changed any.
func filterMap(b []byte, f func(key string, val []byte) ([]byte, bool, error)) ([]byte, bool, error) {
	if msgp.IsNil(b) {
		return b, false, nil
	}
	n, rest, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return nil, false, err
	}
	var body []byte
	kept, changed := uint32(0), false
	for range n {
		key, after, err := msgp.ReadMapKeyZC(rest)
		if err != nil {
			return nil, false, err
		}
		end, err := msgp.Skip(after)
		if err != nil {
			return nil, false, err
		}
		val, ch, err := f(string(key), after[:len(after)-len(end)])
		if err != nil {
			return nil, false, err
		}
		changed = changed || ch
		if val != nil {
			body = append(body, rest[:len(rest)-len(after)]...)
			body = append(body, val...)
			kept++
		}
		rest = end
	}
	return append(msgp.AppendMapHeader(nil, kept), body...), changed, nil
}

// filterArray rewrites each element of the msgpack array at the start of
// b (nil: kept as it is) with f's, and says whether f changed any.
func filterArray(b []byte, f func(elem []byte) ([]byte, bool, error)) ([]byte, bool, error) {
	if msgp.IsNil(b) {
		return b, false, nil
	}
	n, rest, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return nil, false, err
	}
	out := msgp.AppendArrayHeader(nil, n)
	changed := false
	for range n {
		end, err := msgp.Skip(rest)
		if err != nil {
			return nil, false, err
		}
		elem, ch, err := f(rest[:len(rest)-len(end)])
		if err != nil {
			return nil, false, err
		}
		out = append(out, elem...)
		changed = changed || ch
		rest = end
	}
	return out, changed, nil
}
