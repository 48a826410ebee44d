package agent

import (
	"context"
	"strings"
	"testing"
)

// TestTrustedHostIsOneName: a host name in the allowlist trusts that name
// only, in any case and with or without its trailing dot. A look-alike (a
// prefix, a suffix, a subdomain, the name inside another domain, its IDN
// or punycode spellings) that resolves outside the allowlist is refused.
func TestTrustedHostIsOneName(t *testing.T) {
	for _, allow := range [][]string{{"bench.lan"}, {"BENCH.LAN."}} {
		p := newPolicy(t, allow...)
		outside := []string{"172.16.0.9"}
		res := fakeResolver{}
		for _, h := range []string{"bench.lan", "evilbench.lan", "xbench.lan", "sub.bench.lan", "bench.lan.evil.example",
			"bench.la", "bench.lann", "bench-lan", "benchlan", "bench.lan-x", "xn--bnch-5qa.lan", "b.ench.lan"} {
			res[h] = outside
		}
		for _, ok := range []string{"http://bench.lan/", "http://BENCH.lan:8080/x", "http://bench.lan./", "https://Bench.Lan./"} {
			if _, err := p.CheckTarget(context.Background(), ok, res); err != nil {
				t.Errorf("allow %v: %s refused: %v", allow, ok, err)
			}
		}
		for _, bad := range []string{"http://evilbench.lan/", "http://xbench.lan/", "http://sub.bench.lan/",
			"http://bench.lan.evil.example/", "http://bench.la/", "http://bench.lann/", "http://bench-lan/", "http://benchlan/",
			"http://bench.lan-x/", "http://xn--bnch-5qa.lan/", "http://bénch.lan/", "http://b.ench.lan/", "http://bench.lan../"} {
			_, err := p.CheckTarget(context.Background(), bad, res)
			if err == nil {
				t.Errorf("allow %v: %s allowed", allow, bad)
			} else if !strings.Contains(err.Error(), "not in allowlist") && !strings.Contains(err.Error(), "neither an IP address nor a host name") {
				t.Errorf("allow %v: %s refused for another reason: %v", allow, bad, err)
			}
		}
	}
	// An IDN in the allowlist is refused when the policy loads: only
	// ASCII host names (punycode for an IDN) are compared.
	c := DefaultConfig().Policy
	c.Allow = []string{"bénch.lan"}
	if _, err := NewPolicy(c); err == nil {
		t.Error("an IDN allowlist entry accepted")
	}
}
