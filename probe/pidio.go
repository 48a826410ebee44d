package probe

import "fmt"

// pidIO is what the probe uses of /proc/PID/io: bytes that reached the
// block layer (not rchar/wchar, which count page-cache hits too).
type pidIO struct {
	read, write uint64
}

// parsePidIO parses /proc/PID/io ("read_bytes: 4096").
func parsePidIO(b []byte) (pidIO, error) {
	var io pidIO
	var got int
	var f [3][]byte
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		fs := splitFields(line, f[:0])
		if len(fs) != 2 {
			continue
		}
		var dst *uint64
		switch string(fs[0]) {
		case "read_bytes:":
			dst = &io.read
		case "write_bytes:":
			dst = &io.write
		default:
			continue
		}
		v, ok := parseUint(fs[1])
		if !ok {
			return pidIO{}, fmt.Errorf("pid io: bad value %q", fs[1])
		}
		*dst = v
		got++
	}
	if got < 2 {
		return pidIO{}, fmt.Errorf("pid io: no read_bytes or write_bytes")
	}
	return io, nil
}
