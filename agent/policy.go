package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
)

// Policy is what this device lets a remote command do, whatever the command
// says: which targets it may load (an allowlist, loopback only by default)
// and how hard (caps on connections, duration, rate, requests, body and
// headers). Build it with NewPolicy; it is safe for concurrent use.
//
// The policy cannot see what the target server does with a request: a local
// forward proxy or an open redirect follower can still reach other hosts.
// The systemd unit's IPAddressDeny=any is the second fence for that.
type Policy struct {
	prefixes []netip.Prefix
	hosts    []string   // host names trusted by name, lowercased, no trailing dot
	fleet    *fleetFile // the fleet's boards (policy.fleet_file); nil: none
	caps     PolicyConfig
	// memAvailable is the memory the device has for a run, in bytes
	// (MemAvailable of /proc/meminfo); false when it cannot tell.
	memAvailable func() (int64, bool)
}

// Resolver looks up the addresses of a host name. *net.Resolver implements
// it; tests use a fake.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// RefusedError is a command that the policy refuses. Its message is the
// reason that goes into the "rejected" event, e.g. "target 10.0.0.1 not in
// allowlist [127.0.0.0/8 ::1/128]" or "connections 5000 over cap 1024".
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refusef(format string, a ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, a...)}
}

// maxMS is the most milliseconds a Duration holds.
const maxMS = math.MaxInt64 / int64(time.Millisecond)

// msDuration converts a command's milliseconds to a Duration, refusing a
// negative count and one a Duration cannot hold (time.Duration(ms) *
// time.Millisecond would wrap around), the same way on every architecture.
func msDuration(name string, ms int64) (time.Duration, error) {
	if ms < 0 || ms > maxMS {
		return 0, refusef("%s %d ms: want 0..%d", name, ms, maxMS)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// resolveTimeout bounds one host name lookup in CheckTarget.
const resolveTimeout = 5 * time.Second

// NewPolicy builds a Policy from its config. Allowlist entries are CIDRs
// ("10.1.0.0/16"), addresses ("::1", a /32 or /128) or host names
// ("server.lan"). IPv4-mapped IPv6 forms are taken as the IPv4 they map.
func NewPolicy(c PolicyConfig) (*Policy, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	p := &Policy{caps: c, memAvailable: memAvailable}
	if c.FleetFile != "" {
		f, err := openFleetFile(c.FleetFile)
		if err != nil {
			return nil, err
		}
		p.fleet = f
	}
	for _, a := range c.Allow {
		pfx, host, _ := parseAllowEntry(a) // validated above
		if host != "" {
			p.hosts = append(p.hosts, host)
		} else {
			p.prefixes = append(p.prefixes, pfx)
		}
	}
	return p, nil
}

// parseAllowEntry parses one allowlist entry into a prefix or a host name.
func parseAllowEntry(s string) (netip.Prefix, string, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, "", fmt.Errorf("%q is not a CIDR", s)
		}
		if pfx.Addr().Zone() != "" {
			return netip.Prefix{}, "", fmt.Errorf("%q: zones are not allowed", s)
		}
		if pfx.Addr().Is4In6() && pfx.Bits() >= 96 {
			pfx = netip.PrefixFrom(pfx.Addr().Unmap(), pfx.Bits()-96)
		}
		return pfx.Masked(), "", nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return netip.Prefix{}, "", fmt.Errorf("%q: zones are not allowed", s)
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), "", nil
	}
	h, err := checkHostname(s)
	if err != nil {
		return netip.Prefix{}, "", fmt.Errorf("%q is not a CIDR, an address or a host name", s)
	}
	return netip.Prefix{}, h, nil
}

// checkHostname validates a DNS host name and returns it lowercased without
// a trailing dot. A name whose last label is numeric or hexadecimal
// ("127.1", "0x7f.1", "2130706433") is refused: resolvers read such forms as
// IPv4 addresses in ways that differ from one libc to another.
func checkHostname(h string) (string, error) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", errors.New("bad length")
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("bad label %q", l)
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", fmt.Errorf("bad character %q", r)
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return "", errors.New("numeric last label: not a host name")
	}
	return h, nil
}

// allowlist is the text of the allowlist in refusals.
func (p *Policy) allowlist() string {
	parts := make([]string, 0, len(p.prefixes)+len(p.hosts))
	for _, pfx := range p.prefixes {
		parts = append(parts, pfx.String())
	}
	parts = append(parts, p.hosts...)
	return "[" + strings.Join(parts, " ") + "]"
}

func (p *Policy) allowedAddr(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, pfx := range p.prefixes {
		if pfx.Contains(a) {
			return true
		}
	}
	if p.fleet != nil {
		ok, _, _ := p.fleet.has(a)
		return ok
	}
	return false
}

// refuseAddr is the refusal of a target address outside the allowlist and
// the fleet's boards; name is the host name that resolved to it, or "".
func (p *Policy) refuseAddr(name string, a netip.Addr) error {
	what := fmt.Sprintf("target %s", a.Unmap())
	if name != "" {
		what = fmt.Sprintf("target %s resolves to %s,", name, a.Unmap())
	}
	if p.fleet == nil {
		return refusef("%s not in allowlist %s", what, p.allowlist())
	}
	_, n, err := p.fleet.has(a)
	if err != nil {
		return refusef("%s not in allowlist %s nor among the %d boards of policy.fleet_file (%v: the list read before stands)", what, p.allowlist(), n, err)
	}
	return refusef("%s not in allowlist %s nor among the %d boards of policy.fleet_file", what, p.allowlist(), n)
}

// AllowedTarget is a load-test target that the policy allows.
type AllowedTarget struct {
	URL  *url.URL // the parsed URL; its host is what the Host header says
	Host string   // the host as written, without port or brackets
	Port uint16
	// Addrs are the resolved and checked addresses with the port. The load
	// generator must dial exactly these and never resolve Host again: a
	// second lookup could answer differently (DNS rebinding) and reach a
	// host the policy never saw.
	Addrs []netip.AddrPort
}

// CheckTarget checks that rawURL is a target this device may load: scheme
// http or https, no user info, and every address of its host inside the
// allowlist. An IP literal is checked as it is; a host name is resolved with
// r (net.DefaultResolver when nil) and refused when any of its addresses is
// outside the allowlist, or when it does not resolve. A host name listed in
// the allowlist by name is trusted: its addresses are taken as resolved.
// Refusals are *RefusedError; the returned AllowedTarget carries the addresses to
// dial.
func (p *Policy) CheckTarget(ctx context.Context, rawURL string, r Resolver) (*AllowedTarget, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, refusef("target URL %q: cannot parse", rawURL)
	}
	port := uint16(80)
	switch u.Scheme {
	case "http":
	case "https":
		port = 443
	default:
		return nil, refusef("target URL %q: scheme %q not allowed (http and https only)", rawURL, u.Scheme)
	}
	if u.Opaque != "" {
		return nil, refusef("target URL %q: not an absolute http://host/ URL", rawURL)
	}
	if u.User != nil {
		return nil, refusef("target URL %q: user info not allowed", u.Redacted())
	}
	host := u.Hostname()
	if host == "" {
		return nil, refusef("target URL %q: no host", rawURL)
	}
	if ps := u.Port(); ps != "" {
		n, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || n == 0 {
			return nil, refusef("target URL %q: bad port %q", rawURL, ps)
		}
		port = uint16(n)
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, refusef("target URL %q: empty port", rawURL)
	}
	t := &AllowedTarget{URL: u, Host: host, Port: port}

	if a, err := netip.ParseAddr(host); err == nil {
		if !p.allowedAddr(a) {
			return nil, p.refuseAddr("", a)
		}
		t.Addrs = []netip.AddrPort{netip.AddrPortFrom(a, port)}
		return t, nil
	}
	name, err := checkHostname(host)
	if err != nil {
		return nil, refusef("target URL %q: host %q is neither an IP address nor a host name", rawURL, host)
	}
	trusted := false
	for _, h := range p.hosts {
		if h == name {
			trusted = true
		}
	}
	if r == nil {
		r = net.DefaultResolver
	}
	rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(rctx, "ip", name)
	if err != nil {
		return nil, refusef("target %s: cannot resolve: %v", name, err)
	}
	if len(addrs) == 0 {
		return nil, refusef("target %s: resolves to no address", name)
	}
	seen := map[netip.Addr]bool{}
	for _, a := range addrs {
		if !trusted && !p.allowedAddr(a) {
			return nil, p.refuseAddr(name, a)
		}
		if !seen[a] {
			seen[a] = true
			t.Addrs = append(t.Addrs, netip.AddrPortFrom(a, port))
		}
	}
	return t, nil
}

// LoadSpec is what the policy needs to know of a load-test command. The
// daemon maps the wire command onto it.
type LoadSpec struct {
	URL         string
	Method      string   // "" is GET
	Headers     []string // "Name: value"
	Body        []byte
	Connections int
	Duration    time.Duration // 0 when the run is bounded by Requests
	Rate        float64       // requests/s, open loop; 0 is closed loop
	Requests    int64         // 0 when the run is bounded by Duration
	Timeout     time.Duration // per request; 0 is the load generator's default
	Warmup      time.Duration
	Repeat      int  // 0 or 1 is one run
	HTTP2       bool // HTTP/2 (h2 over TLS, h2c in cleartext)
	Streams     int  // HTTP/2 streams per connection; 0 is one
}

// memShare is the share of the device's available memory a run may take
// by loadgen.MemoryEstimate, which counts the worst case: the rest is
// left to the agent, the probe and the device's own work.
const memShare = 2

// memAvailable reads MemAvailable from /proc/meminfo.
func memAvailable() (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil && kb > 0
		}
	}
	return 0, false
}

// checkMemory refuses a run that loadgen.MemoryEstimate says could take
// more than 1/memShare of the memory the device has available now: a
// hostile or silent server must not get the agent killed for want of
// memory (1,024 connections of 1,000 HTTP/2 streams hold 227 MB against
// a server that answers nothing).
func (p *Policy) checkMemory(s LoadSpec) error {
	if p.memAvailable == nil {
		return nil
	}
	avail, ok := p.memAvailable()
	if !ok {
		return nil
	}
	cfg := loadgen.Config{URL: s.URL, Method: s.Method, Body: s.Body, Connections: s.Connections,
		Requests: s.Requests, Duration: s.Duration, HTTP2: s.HTTP2, Streams: s.Streams}
	for _, h := range s.Headers {
		name, value, _ := strings.Cut(h, ":")
		cfg.Headers = append(cfg.Headers, report.Header{Name: name, Value: strings.TrimSpace(value)})
	}
	need, err := loadgen.MemoryEstimate(cfg)
	if err != nil {
		return nil // a spec loadgen refuses fails at its start, saying why
	}
	if need > avail/memShare {
		return refusef("connections %d x %d streams need up to %d MB, over 1/%d of the %d MB this device has available",
			s.Connections, max(s.Streams, 1), need>>20, memShare, avail>>20)
	}
	return nil
}

// CheckLoad checks a load spec against the caps; it does not look at the
// URL (CheckTarget does). Refusals are *RefusedError.
func (p *Policy) CheckLoad(s LoadSpec) error {
	c := p.caps
	if err := checkMethod(s.Method); err != nil {
		return err
	}
	if s.Connections < 1 {
		return refusef("connections %d: must be at least 1", s.Connections)
	}
	if s.Connections > c.MaxConnections {
		return refusef("connections %d over cap %d", s.Connections, c.MaxConnections)
	}
	if s.Duration < 0 || s.Requests < 0 || s.Warmup < 0 || s.Timeout < 0 || s.Repeat < 0 || s.Rate < 0 {
		return refusef("negative duration, requests, warmup, timeout, repeat or rate")
	}
	if s.Duration == 0 && s.Requests == 0 {
		return refusef("unbounded run: set a duration or a request count")
	}
	if s.Duration > c.MaxDuration {
		return refusef("duration %v over cap %v", s.Duration, c.MaxDuration)
	}
	if s.Warmup > c.MaxDuration {
		return refusef("warmup %v over cap %v", s.Warmup, c.MaxDuration)
	}
	if s.Timeout > c.MaxDuration {
		return refusef("timeout %v over cap %v", s.Timeout, c.MaxDuration)
	}
	if s.Requests > c.MaxRequests {
		return refusef("requests %d over cap %d", s.Requests, c.MaxRequests)
	}
	if s.Rate > c.MaxRate || s.Rate != s.Rate {
		return refusef("rate %v over cap %v", s.Rate, c.MaxRate)
	}
	if s.Rate > 0 && s.Rate < loadgen.MinRate {
		return refusef("rate %v under the lowest open-loop rate %v", s.Rate, loadgen.MinRate)
	}
	if s.Repeat > c.MaxRepeat {
		return refusef("repeat %d over cap %d", s.Repeat, c.MaxRepeat)
	}
	if int64(len(s.Body)) > int64(c.MaxBodyBytes) {
		return refusef("body %d bytes over cap %d", len(s.Body), int64(c.MaxBodyBytes))
	}
	if len(s.Headers) > c.MaxHeaders {
		return refusef("headers %d over cap %d", len(s.Headers), c.MaxHeaders)
	}
	total := 0
	for _, h := range s.Headers {
		if err := checkHeader(h); err != nil {
			return err
		}
		total += len(h) + 2 // CRLF
	}
	if int64(total) > int64(c.MaxHeaderBytes) {
		return refusef("headers %d bytes over cap %d", total, int64(c.MaxHeaderBytes))
	}
	return p.checkMemory(s)
}

// Check runs CheckLoad and then CheckTarget on s.URL.
func (p *Policy) Check(ctx context.Context, s LoadSpec, r Resolver) (*AllowedTarget, error) {
	if err := p.CheckLoad(s); err != nil {
		return nil, err
	}
	return p.CheckTarget(ctx, s.URL, r)
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

func checkMethod(m string) error {
	if m == "" {
		return nil
	}
	if !isToken(m) || len(m) > 32 {
		return refusef("method %q is not a valid HTTP method", m)
	}
	if strings.EqualFold(m, "CONNECT") {
		return refusef("method CONNECT not allowed")
	}
	return nil
}

func checkHeader(h string) error {
	name, value, ok := strings.Cut(h, ":")
	if !ok || !isToken(name) {
		return refusef("header %q is not \"Name: value\"", h)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return refusef("header %s: value holds CR, LF or NUL", name)
	}
	return nil
}
