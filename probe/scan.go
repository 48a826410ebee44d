package probe

// Byte-level scanning shared by the parsers: no allocation, no strconv on
// the hot path.

// nextLine returns the first line of b (without '\n') and the rest.
func nextLine(b []byte) (line, rest []byte) {
	for i, c := range b {
		if c == '\n' {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// splitFields appends the space- or tab-separated fields of line to out[:0]
// and returns it. It never allocates: it stops at cap(out) fields, and
// callers size out for the fields they read (/proc/PID/stat has 52, the
// probe reads 24).
func splitFields(line []byte, out [][]byte) [][]byte {
	out = out[:0]
	start := -1
	for i, c := range line {
		if len(out) == cap(out) {
			return out
		}
		if c == ' ' || c == '\t' || c == '\r' {
			if start >= 0 {
				out = append(out, line[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 && len(out) < cap(out) {
		out = append(out, line[start:])
	}
	return out
}

// parseUint parses a decimal unsigned integer; ok is false for anything
// else, including overflow.
func parseUint(b []byte) (v uint64, ok bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseInt parses a decimal integer with an optional leading '-'.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := parseUint(b)
	if !ok || u > 1<<63 || (!neg && u == 1<<63) {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// parseFixed parses a non-negative decimal with an optional fraction, as
// /proc/loadavg and the PSI averages print them ("0.52", "12.00").
func parseFixed(b []byte) (float64, bool) {
	intPart, frac := b, []byte(nil)
	for i, c := range b {
		if c == '.' {
			intPart, frac = b[:i], b[i+1:]
			break
		}
	}
	iv, ok := parseUint(intPart)
	if !ok {
		return 0, false
	}
	v := float64(iv)
	if len(frac) > 0 {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		fv, ok := parseUint(frac)
		if !ok {
			return 0, false
		}
		scale := 1.0
		for range frac {
			scale *= 10
		}
		v += float64(fv) / scale
	}
	return v, true
}

// trimSpace trims ASCII white space and NUL (device-tree strings end in one).
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0 }

// hasPrefix reports whether b begins with s, without converting.
func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}
