package agent

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestMemoryEstimateCountsTheBody: the memory a run may take counts its
// request body, which each connection may hold twice in its pending
// output (and over HTTP/2 again in DATA frames): 100 connections posting
// 1 MiB need up to 239 MB (39 MB without the body), over half of the
// 400 MB a device has available; over HTTP/2, 439 MB, over half of
// 800 MB.
func TestMemoryEstimateCountsTheBody(t *testing.T) {
	p, err := NewPolicy(DefaultConfig().Policy)
	if err != nil {
		t.Fatal(err)
	}
	post := func(h2 bool, body int) LoadSpec {
		return LoadSpec{URL: "http://127.0.0.1/", Method: "POST", Body: make([]byte, body), Connections: 100, Duration: time.Second, HTTP2: h2}
	}
	for _, c := range []struct {
		name    string
		avail   int64
		spec    LoadSpec
		refused string // the figure of the reason; "" when allowed
	}{
		{"HTTP/1, 1 MiB bodies, 400 MB available", 400 << 20, post(false, 1<<20), "need up to 239 MB, over 1/2 of the 400 MB"},
		{"HTTP/1, no body, 400 MB available", 400 << 20, post(false, 0), ""},
		{"HTTP/1, 1 MiB bodies, 800 MB available", 800 << 20, post(false, 1<<20), ""},
		{"HTTP/2, 1 MiB bodies, 800 MB available", 800 << 20, post(true, 1<<20), "need up to 439 MB, over 1/2 of the 800 MB"},
		{"HTTP/2, no body, 800 MB available", 800 << 20, post(true, 0), ""},
	} {
		p.memAvailable = func() (int64, bool) { return c.avail, true }
		err := p.CheckLoad(c.spec)
		var re *RefusedError
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refused != "" && (!errors.As(err, &re) || !strings.Contains(re.Reason, c.refused)):
			t.Errorf("%s: %v, want refused: %q", c.name, err, c.refused)
		}
	}
}
