package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// fakeResolver answers from a map; a missing name fails to resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	ss, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func newPolicy(t *testing.T, allow ...string) *Policy {
	t.Helper()
	c := DefaultConfig().Policy
	if allow != nil {
		c.Allow = allow
	}
	p, err := NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckTargetDefaultLoopback(t *testing.T) {
	p := newPolicy(t)
	res := fakeResolver{
		"localhost":      {"127.0.0.1", "::1"},
		"evil.example":   {"127.0.0.1", "10.0.0.1"},
		"mapped.example": {"::ffff:10.0.0.1"},
		"empty.example":  {},
	}
	for _, tc := range []struct {
		url  string
		want string // "" for allowed, else a substring of the refusal
	}{
		{"http://127.0.0.1/", ""},
		{"http://127.0.0.1:8080/index.html?x=1", ""},
		{"http://127.1.2.3/", ""},
		{"http://[::1]:8080/", ""},
		{"http://localhost:8080/", ""},
		{"HTTP://LOCALHOST./", ""},
		{"http://[::ffff:127.0.0.1]/", ""},
		{"http://10.0.0.1/", "target 10.0.0.1 not in allowlist [127.0.0.0/8 ::1/128]"},
		{"http://[::ffff:10.0.0.1]/", "target 10.0.0.1 not in allowlist"},
		{"http://[::ffff:a00:1]/", "target 10.0.0.1 not in allowlist"},
		{"http://0.0.0.0/", "target 0.0.0.0 not in allowlist"},
		{"http://[::]/", "target :: not in allowlist"},
		{"http://[fe80::1%25eth0]/", "not in allowlist"},
		{"http://evil.example/", "target evil.example resolves to 10.0.0.1, not in allowlist"},
		{"http://mapped.example/", "resolves to 10.0.0.1"},
		{"http://empty.example/", "resolves to no address"},
		{"http://unknown.example/", "target unknown.example: cannot resolve: no such host"},
		{"http://user:pw@127.0.0.1/", "user info not allowed"},
		{"http://127.0.0.1:80@10.0.0.1/", "user info not allowed"},
		{"https://127.0.0.1/", ""},
		{"https://localhost:8443/index.html", ""},
		{"HTTPS://[::1]/", ""},
		{"https://10.0.0.1/", "target 10.0.0.1 not in allowlist"},
		{"https://evil.example:8443/", "target evil.example resolves to 10.0.0.1, not in allowlist"},
		{"https://user@127.0.0.1/", "user info not allowed"},
		{"ftp://127.0.0.1/", `scheme "ftp" not allowed (http and https only)`},
		{"file:///etc/passwd", `scheme "file" not allowed`},
		{"127.0.0.1:80", "cannot parse"},
		{"http:127.0.0.1", "not an absolute"},
		{"http:///path", "no host"},
		{"http://127.0.0.1:0/", "bad port"},
		{"http://127.0.0.1:/", "empty port"},
		{"http://127.1/", "neither an IP address nor a host name"},
		{"http://2130706433/", "neither an IP address nor a host name"},
		{"http://0x7f.1/", "neither an IP address nor a host name"},
		{"http://exa mple/", "cannot parse"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			tg, err := p.CheckTarget(context.Background(), tc.url, res)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(tg.Addrs) == 0 {
					t.Fatal("no addresses")
				}
				for _, a := range tg.Addrs {
					if !a.Addr().Unmap().IsLoopback() {
						t.Errorf("address %v not loopback", a)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("allowed, want refusal %q", tc.want)
			}
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Errorf("error %T is not a *RefusedError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refusal %q, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckTargetReturnsAddressesToDial(t *testing.T) {
	p := newPolicy(t)
	tg, err := p.CheckTarget(context.Background(), "http://localhost:8080/x", fakeResolver{"localhost": {"127.0.0.1", "::1", "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080"), netip.MustParseAddrPort("[::1]:8080")}
	if len(tg.Addrs) != len(want) || tg.Addrs[0] != want[0] || tg.Addrs[1] != want[1] {
		t.Errorf("addrs %v, want %v (deduplicated, in order)", tg.Addrs, want)
	}
	if tg.Host != "localhost" || tg.Port != 8080 || tg.URL.Path != "/x" {
		t.Errorf("target %+v", tg)
	}
	tg, err = p.CheckTarget(context.Background(), "http://127.0.0.1/", nil)
	if err != nil || tg.Port != 80 || tg.Addrs[0] != netip.MustParseAddrPort("127.0.0.1:80") {
		t.Errorf("default port: %+v, %v", tg, err)
	}
	tg, err = p.CheckTarget(context.Background(), "https://127.0.0.1/", nil)
	if err != nil || tg.Port != 443 || tg.Addrs[0] != netip.MustParseAddrPort("127.0.0.1:443") {
		t.Errorf("https's default port: %+v, %v", tg, err)
	}
}

func TestCheckTargetAllowlistEntries(t *testing.T) {
	p := newPolicy(t, "192.168.7.0/24", "0.0.0.0", "::ffff:10.1.2.3", "bench.lan")
	res := fakeResolver{"bench.lan": {"172.16.0.9"}, "other.lan": {"192.168.7.20"}}
	for _, ok := range []string{"http://192.168.7.44/", "http://0.0.0.0/", "http://10.1.2.3/", "http://bench.lan/", "http://other.lan/"} {
		if _, err := p.CheckTarget(context.Background(), ok, res); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://127.0.0.1/", "http://192.168.8.1/", "http://10.1.2.4/"} {
		if _, err := p.CheckTarget(context.Background(), bad, res); err == nil {
			t.Errorf("%s allowed", bad)
		}
	}
	if _, err := p.CheckTarget(context.Background(), "http://127.0.0.1/", res); err == nil ||
		!strings.Contains(err.Error(), "[192.168.7.0/24 0.0.0.0/32 10.1.2.3/32 bench.lan]") {
		t.Errorf("allowlist text: %v", err)
	}
}

func TestCheckTargetHonoursContext(t *testing.T) {
	p := newPolicy(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.CheckTarget(ctx, "http://slow.example/", blockingResolver{})
	if err == nil || !strings.Contains(err.Error(), "cannot resolve") {
		t.Fatalf("err %v", err)
	}
}

type blockingResolver struct{}

func (blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Minute):
		return nil, errors.New("not cancelled")
	}
}

func okSpec() LoadSpec {
	return LoadSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 10, Duration: 10 * time.Second, Headers: []string{"Accept: */*"}}
}

func TestCheckLoad(t *testing.T) {
	p := newPolicy(t)
	if err := p.CheckLoad(okSpec()); err != nil {
		t.Fatalf("ok spec refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*LoadSpec)
		want string
	}{
		{"connections", func(s *LoadSpec) { s.Connections = 5000 }, "connections 5000 over cap 1024"},
		{"zero connections", func(s *LoadSpec) { s.Connections = 0 }, "connections 0: must be at least 1"},
		{"duration", func(s *LoadSpec) { s.Duration = time.Hour }, "duration 1h0m0s over cap 10m0s"},
		{"unbounded", func(s *LoadSpec) { s.Duration = 0 }, "unbounded run"},
		{"requests", func(s *LoadSpec) { s.Requests = 1 << 40 }, "requests 1099511627776 over cap 100000000"},
		{"rate", func(s *LoadSpec) { s.Rate = 1e6 }, "rate 1e+06 over cap 100000"},
		{"negative", func(s *LoadSpec) { s.Rate = -1 }, "negative"},
		{"repeat", func(s *LoadSpec) { s.Repeat = 1000 }, "repeat 1000 over cap 30"},
		{"warmup", func(s *LoadSpec) { s.Warmup = 11 * time.Minute }, "warmup 11m0s over cap"},
		{"timeout", func(s *LoadSpec) { s.Timeout = 11 * time.Minute }, "timeout 11m0s over cap"},
		{"body", func(s *LoadSpec) { s.Body = make([]byte, 2<<20) }, "body 2097152 bytes over cap 1048576"},
		{"header count", func(s *LoadSpec) { s.Headers = make([]string, 33); fill(s.Headers, "X: y") }, "headers 33 over cap 32"},
		{"header bytes", func(s *LoadSpec) { s.Headers = []string{"X: " + strings.Repeat("a", 9000)} }, "headers 9005 bytes over cap 8192"},
		{"header injection", func(s *LoadSpec) { s.Headers = []string{"X: a\r\nHost: evil"} }, "value holds CR, LF or NUL"},
		{"header no colon", func(s *LoadSpec) { s.Headers = []string{"Bogus"} }, `header "Bogus" is not "Name: value"`},
		{"header bad name", func(s *LoadSpec) { s.Headers = []string{"Bad Name: x"} }, "is not \"Name: value\""},
		{"method", func(s *LoadSpec) { s.Method = "GET /evil" }, "not a valid HTTP method"},
		{"connect", func(s *LoadSpec) { s.Method = "connect" }, "method CONNECT not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := okSpec()
			tc.mod(&s)
			err := p.CheckLoad(s)
			if err == nil {
				t.Fatalf("allowed, want %q", tc.want)
			}
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, tc.want) {
				t.Errorf("refusal %q, want %q", err, tc.want)
			}
		})
	}
	s := okSpec()
	s.Duration, s.Requests = 0, 1000
	if err := p.CheckLoad(s); err != nil {
		t.Errorf("request-bounded run refused: %v", err)
	}
}

func fill(ss []string, v string) {
	for i := range ss {
		ss[i] = v
	}
}

func TestCheckCombined(t *testing.T) {
	p := newPolicy(t)
	s := okSpec()
	tg, err := p.Check(context.Background(), s, nil)
	if err != nil || tg.Addrs[0].Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("Check: %+v %v", tg, err)
	}
	s.URL = "http://10.0.0.1/"
	if _, err := p.Check(context.Background(), s, nil); err == nil {
		t.Error("Check allowed 10.0.0.1")
	}
}

func TestNewPolicyRejectsBadConfig(t *testing.T) {
	c := DefaultConfig().Policy
	c.MaxConnections = -3
	if _, err := NewPolicy(c); err == nil || err.Error() != "policy.max_connections: must be > 0, got -3" {
		t.Errorf("err %v", err)
	}
	c = DefaultConfig().Policy
	c.Allow = []string{"fe80::1%eth0"}
	if _, err := NewPolicy(c); err == nil {
		t.Error("zoned entry accepted")
	}
}

func ExamplePolicy_Check() {
	cfg := DefaultConfig() // loopback only
	p, err := NewPolicy(cfg.Policy)
	if err != nil {
		panic(err)
	}
	spec := LoadSpec{URL: "http://127.0.0.1:8080/", Connections: 64, Duration: 30 * time.Second}
	t, err := p.Check(context.Background(), spec, nil)
	fmt.Println(t.Addrs, err)

	spec.URL = "http://10.0.0.1/"
	_, err = p.Check(context.Background(), spec, nil)
	fmt.Println(err)

	spec.Connections = 5000
	_, err = p.Check(context.Background(), spec, nil)
	fmt.Println(err)
	// Output:
	// [127.0.0.1:8080] <nil>
	// target 10.0.0.1 not in allowlist [127.0.0.0/8 ::1/128]
	// connections 5000 over cap 1024
}
