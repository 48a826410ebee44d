package loadgen

import (
	"strings"
	"testing"
)

// parseAll feeds resp to a parser in pieces of the given size and returns
// the parser and whether it finished.
func parseAll(t *testing.T, resp string, piece int, head bool) (*respParser, bool, error) {
	t.Helper()
	var p respParser
	p.reset(head, true)
	b := []byte(resp)
	for len(b) > 0 && !p.done() {
		k := min(piece, len(b))
		n, err := p.feed(b[:k])
		if err != nil {
			return &p, false, err
		}
		b = b[n:]
		if n < k {
			break
		}
	}
	return &p, p.done(), nil
}

func TestParserSplitsAnywhere(t *testing.T) {
	cases := []struct {
		name, resp string
		status     int
		body       int64
		reuse      bool
	}{
		{"length", "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Length: 11\r\n\r\nhello world", 200, 11, true},
		{"chunked", "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n", 200, 19, true},
		{"close header", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 503, 0, false},
		{"http10", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, 1, false},
		{"http10 keepalive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", 200, 1, true},
		{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", 200, 2, true},
		{"no reason", "HTTP/1.1 204\r\n\r\n", 204, 0, true},
	}
	for _, tc := range cases {
		for _, piece := range []int{1, 2, 3, 7, 64, 1 << 20} {
			p, done, err := parseAll(t, tc.resp, piece, false)
			if err != nil || !done {
				t.Fatalf("%s/%d: done %v err %v", tc.name, piece, done, err)
			}
			if p.status != tc.status || p.body != tc.body || p.reuse() != tc.reuse {
				t.Errorf("%s/%d: status %d body %d reuse %v", tc.name, piece, p.status, p.body, p.reuse())
			}
		}
	}
	p, _, _ := parseAll(t, cases[0].resp, 5, false)
	if string(p.server) != "nginx/1.22.1" {
		t.Errorf("server %q", p.server)
	}
}

func TestParserStopsAtResponseEnd(t *testing.T) {
	var p respParser
	p.reset(false, false)
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA"
	n, err := p.feed([]byte(resp))
	if err != nil || !p.done() || n != len(resp)-5 {
		t.Errorf("consumed %d of %d, done %v, err %v", n, len(resp), p.done(), err)
	}
}

func TestParserErrors(t *testing.T) {
	for _, resp := range []string{
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"SSH-2.0-OpenSSH\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n",
		"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLine+10) + "\r\n\r\n",
	} {
		if _, _, err := parseAll(t, resp, 3, false); err == nil {
			t.Errorf("accepted %.40q", resp)
		}
	}
}

func TestParserUntilCloseAndHead(t *testing.T) {
	p, done, err := parseAll(t, "HTTP/1.1 200 OK\r\n\r\nabc", 2, false)
	if err != nil || done || p.reuse() {
		t.Fatalf("body until close: done %v reuse %v err %v", done, p.reuse(), err)
	}
	if !p.eof() || p.body != 3 {
		t.Errorf("eof did not end the body (body %d)", p.body)
	}
	p, done, _ = parseAll(t, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", 4, true)
	if !done || p.body != 0 {
		t.Errorf("HEAD: done %v body %d", done, p.body)
	}
	p, _, _ = parseAll(t, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", 4, false)
	if p.eof() {
		t.Error("eof completed a body short of its Content-Length")
	}
}

func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nbody",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, piece uint8) {
		var p respParser
		p.reset(false, true)
		step := int(piece)%64 + 1
		total := 0
		for len(b) > 0 && !p.done() {
			k := min(step, len(b))
			n, err := p.feed(b[:k])
			if n < 0 || n > k {
				t.Fatalf("consumed %d of %d", n, k)
			}
			total += n
			if err != nil || n < k {
				break
			}
			b = b[k:]
		}
		if len(p.line) > maxLine || p.body < 0 || p.remaining < 0 {
			t.Fatalf("state out of bounds: line %d body %d remaining %d", len(p.line), p.body, p.remaining)
		}
	})
}

func BenchmarkParser(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Wed, 02 Dec 2026 14:00:00 GMT\r\nContent-Type: text/html\r\nContent-Length: 2159\r\nLast-Modified: Wed, 02 Dec 2026 13:00:00 GMT\r\nConnection: keep-alive\r\nETag: \"656b1a2c-86f\"\r\nAccept-Ranges: bytes\r\n\r\n" + strings.Repeat("x", 2159))
	var p respParser
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for range b.N {
		p.reset(false, false)
		if _, err := p.feed(resp); err != nil || !p.done() {
			b.Fatal("parse failed")
		}
	}
}
