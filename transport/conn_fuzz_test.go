package transport

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzCappedConn: whatever a broker sends, cappedConn passes on exactly
// the packets within the cap, byte for byte, passes a PUBLISH over it
// without its payload, and stops at the first other packet over it or a
// malformed length, as a plain reading of the stream says it should.
func FuzzCappedConn(f *testing.F) {
	const max = 64
	f.Add([]byte{0x30, 0x03, 0, 1, 'a', 0xd0, 0x00})                                           // PUBLISH, PINGRESP
	f.Add(append([]byte{0x32, 0x80, 0x01, 0, 1, 't', 0, 9}, make([]byte, 123)...))             // QoS 1 PUBLISH over the cap
	f.Add(append(append([]byte{0x90, 0x41}, make([]byte, 65)...), 0xd0, 0x00))                 // SUBACK over the cap
	f.Add([]byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x7f})                                          // a length of 5 bytes
	f.Add(append(append([]byte{0x30, 0xc8, 0x01, 0, 0}, make([]byte, 198)...), 0x20, 2, 0, 0)) // skipped, then CONNACK
	f.Add([]byte{0x34, 0x41, 0xff, 0xff})                                                      // a topic longer than the packet
	f.Fuzz(func(t *testing.T, in []byte) {
		var skipped int
		c := &cappedConn{r: bufio.NewReader(bytes.NewReader(in)), max: max, skipped: func(int) { skipped++ }}
		got, _ := io.ReadAll(readerFunc(func(p []byte) (int, error) { return c.Read(p[:min(len(p), 7)]) }))
		want, wantSkipped := expectCapped(in, max)
		if !bytes.Equal(got, want) || skipped != wantSkipped {
			t.Fatalf("in % x\ngot  % x (%d skipped)\nwant % x (%d skipped)", in, got, skipped, want, wantSkipped)
		}
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// expectCapped is what cappedConn should let through of stream in.
func expectCapped(in []byte, max int) (out []byte, skipped int) {
	for len(in) > 0 {
		n, size, mult := 1, 0, 1
		for {
			if n >= len(in) || n > 4 {
				return out, skipped // cut short, or a malformed length
			}
			b := in[n]
			n++
			size += int(b&0x7f) * mult
			if b&0x80 == 0 {
				break
			}
			mult <<= 7
		}
		switch {
		case size <= max:
			end := min(n+size, len(in))
			out = append(out, in[:end]...)
			in = in[end:]
		case in[0]>>4 == 3:
			if n+2 > len(in) {
				return out, skipped
			}
			keep := 2 + (int(in[n])<<8 | int(in[n+1]))
			if in[0]>>1&3 > 0 {
				keep += 2
			}
			if keep > size || n+size > len(in) {
				return out, skipped
			}
			out = append(out, in[0])
			for k := keep; ; k >>= 7 { // the remaining length, 7 bits a byte
				if k < 0x80 {
					out = append(out, byte(k))
					break
				}
				out = append(out, byte(k&0x7f|0x80))
			}
			out = append(out, in[n:n+keep]...)
			skipped++
			in = in[n+size:]
		default:
			return out, skipped
		}
	}
	return out, skipped
}
