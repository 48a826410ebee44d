package agent

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCapsAtTheirEdge: each cap of the policy lets its own value through
// and refuses one step more: connections, duration, warm-up, timeout,
// requests, rate, repeat, body bytes, header count and header bytes.
func TestCapsAtTheirEdge(t *testing.T) {
	c := DefaultConfig().Policy
	c.MaxConnections, c.MaxDuration, c.MaxRequests, c.MaxRate, c.MaxRepeat = 7, 90*time.Second, 5000, 250, 4
	c.MaxBodyBytes, c.MaxHeaders, c.MaxHeaderBytes = 100, 3, 40
	p, err := NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	base := func() LoadSpec {
		return LoadSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 1, Duration: time.Second}
	}
	for _, tc := range []struct {
		name     string
		at, over func(*LoadSpec)
	}{
		{"connections", func(s *LoadSpec) { s.Connections = 7 }, func(s *LoadSpec) { s.Connections = 8 }},
		{"duration", func(s *LoadSpec) { s.Duration = 90 * time.Second }, func(s *LoadSpec) { s.Duration = 90*time.Second + 1 }},
		{"warm-up", func(s *LoadSpec) { s.Warmup = 90 * time.Second }, func(s *LoadSpec) { s.Warmup = 90*time.Second + 1 }},
		{"timeout", func(s *LoadSpec) { s.Timeout = 90 * time.Second }, func(s *LoadSpec) { s.Timeout = 90*time.Second + 1 }},
		{"requests", func(s *LoadSpec) { s.Duration, s.Requests = 0, 5000 }, func(s *LoadSpec) { s.Duration, s.Requests = 0, 5001 }},
		{"rate", func(s *LoadSpec) { s.Rate = 250 }, func(s *LoadSpec) { s.Rate = 250.001 }},
		{"repeat", func(s *LoadSpec) { s.Repeat = 4 }, func(s *LoadSpec) { s.Repeat = 5 }},
		{"body", func(s *LoadSpec) { s.Body = make([]byte, 100) }, func(s *LoadSpec) { s.Body = make([]byte, 101) }},
		{"header count", func(s *LoadSpec) { s.Headers = []string{"A: 1", "B: 2", "C: 3"} },
			func(s *LoadSpec) { s.Headers = []string{"A: 1", "B: 2", "C: 3", "D: 4"} }},
		// 38 bytes and its CRLF make 40.
		{"header bytes", func(s *LoadSpec) { s.Headers = []string{"X: " + strings.Repeat("a", 35)} },
			func(s *LoadSpec) { s.Headers = []string{"X: " + strings.Repeat("a", 36)} }},
	} {
		at, over := base(), base()
		tc.at(&at)
		tc.over(&over)
		if err := p.CheckLoad(at); err != nil {
			t.Errorf("%s at its cap refused: %v", tc.name, err)
		}
		if err := p.CheckLoad(over); err == nil {
			t.Errorf("%s one step over its cap allowed", tc.name)
		}
	}
}

// TestMemoryCap: the largest HTTP/2 spec the wire allows (1,024
// connections x 1,000 streams, about 490 MB at worst) is refused on a
// device with 900 MB available (over half of it), with a reason that says
// so, and allowed with 4 GB; a small test passes on the small device.
func TestMemoryCap(t *testing.T) {
	p, err := NewPolicy(DefaultConfig().Policy)
	if err != nil {
		t.Fatal(err)
	}
	big := LoadSpec{URL: "http://127.0.0.1/", Connections: 1024, Duration: time.Second, HTTP2: true, Streams: 1000}
	small := LoadSpec{URL: "http://127.0.0.1/", Connections: 64, Duration: time.Second, HTTP2: true, Streams: 10}
	p.memAvailable = func() (int64, bool) { return 900 << 20, true }
	err = p.CheckLoad(big)
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "1024 x 1000 streams need up to") || !strings.Contains(re.Reason, "900 MB") {
		t.Errorf("1024 x 1000 streams with 900 MB available: %v", err)
	}
	if err := p.CheckLoad(small); err != nil {
		t.Errorf("64 x 10 streams with 900 MB available: %v", err)
	}
	p.memAvailable = func() (int64, bool) { return 4 << 30, true }
	if err := p.CheckLoad(big); err != nil {
		t.Errorf("1024 x 1000 streams with 4 GB available: %v", err)
	}
	if _, ok := memAvailable(); !ok {
		t.Error("no MemAvailable read from /proc/meminfo")
	}
}
