package measure

import (
	"context"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/verdict"
	"golang.org/x/sys/unix"
)

// Run is one measured run: what the load generator measured, and what the
// probe saw of the machine over the same window (nil without the probe).
type Run struct {
	Load   *report.LoadResult
	System *machine.Report
	// Verdict is what limited the run and whether its figure stands.
	Verdict *verdict.Verdict
}

// Test is a load test to measure, and how.
type Test struct {
	Load   loadgen.Config
	Repeat int // runs; 0 is 1
	// Auto, when set, is --repeat auto: Repeat is ignored.
	Auto *Auto

	NoProbe   bool          // do not sample the machine
	ProbeRoot string        // read proc/ and sys/ below it; "" is "/"
	Interval  time.Duration // between the probe's samples; 0 is 1 s
	// Watches are the processes --watch names: the probe reports them
	// as the server's, beside the server listening on the target's port
	// (with its workers and upstreams; none when the target is another
	// machine's) and this process (probe.RunWatches).
	Watches []probe.Watch

	// Before, when set, is called before each run (i counts from 0).
	Before func(i int)
	// Progress, when set, gives run i's progress callback (nil: none).
	Progress func(i int) func(loadgen.Progress)
	// After, when set, is called with each run measured; an error stops
	// the runs and is returned.
	After func(i int, r Run) error
	// Window, when set, is called when run i's measured window starts
	// (start true) and when it ends, from the load generator's goroutine:
	// it must not block.
	Window func(i int, start bool)
}

// Repeat measures t: t.Repeat runs one after another, each with the probe
// recording the machine over its window unless t.NoProbe. It stops early
// when a run was interrupted or ctx ends. It returns the runs measured,
// also with an error, which is the first run's that could not be measured
// (a bad configuration, a target that refuses every connection) or the
// After hook's.
func Repeat(ctx context.Context, t Test) ([]Run, error) {
	var watches []probe.Watch
	if !t.NoProbe {
		port := 0
		if tg, err := report.ParseTarget(t.Load.URL); err == nil {
			if _, remote := RemoteTarget(ctx, t.Load, t.root()); !remote {
				// What listens on that port here is the server; on
				// another machine's target it is not.
				port = tg.Port
			}
		}
		watches = probe.RunWatches(t.root(), port, t.Watches)
	}
	var runs []Run
	n := max(t.Repeat, 1)
	if t.Auto != nil {
		n = t.Auto.max()
	}
	began := time.Now()
	for i := range n {
		if t.Auto != nil && t.Auto.enough(runs, time.Since(began)) {
			break
		}
		if t.Before != nil {
			t.Before(i)
		}
		cfg := t.Load
		if t.Progress != nil {
			cfg.Progress = t.Progress(i)
		}
		if t.Window != nil {
			cfg.WindowStart = func() { t.Window(i, true) }
			cfg.WindowEnd = func() { t.Window(i, false) }
		}
		var r Run
		var err error
		if t.NoProbe {
			r.Load, err = loadgen.Run(ctx, cfg)
		} else {
			r.Load, r.System, err = Measure(ctx, cfg, t.root(), t.interval(), watches)
		}
		if err != nil {
			return runs, err
		}
		r.Verdict = judge(r, t.root())
		runs = append(runs, r)
		if t.After != nil {
			if err := t.After(i, r); err != nil {
				return runs, err
			}
		}
		if r.Load.Interrupted || ctx.Err() != nil {
			break
		}
	}
	return runs, nil
}

func (t *Test) root() string {
	if t.ProbeRoot == "" {
		return "/"
	}
	return t.ProbeRoot
}

func (t *Test) interval() time.Duration {
	if t.Interval <= 0 {
		return time.Second
	}
	return t.Interval
}

// Measure runs one load test while a probe below root records the
// machine over the load generator's window, edge for edge (it sets cfg's
// window hooks): the warm-up and the drain are in neither. Repeat measures each run
// through it. When the target is another machine's, the round-trip time
// to it is measured too (probe.RecordPath: handshakes before the load and
// over the window), into the report's Path.
func Measure(ctx context.Context, cfg loadgen.Config, root string, interval time.Duration, watches []probe.Watch) (*report.LoadResult, *machine.Report, error) {
	p := probe.New(root)
	defer p.Close()
	rec := p.Record(ctx, interval, watches)
	var path *probe.PathRecorder
	if addr, remote := RemoteTarget(ctx, cfg, root); remote {
		path = probe.RecordPath(ctx, addr)
	}
	start, end := cfg.WindowStart, cfg.WindowEnd
	cfg.WindowStart = func() {
		rec.MarkStart()
		if path != nil {
			path.MarkStart()
		}
		if start != nil {
			start()
		}
	}
	cfg.WindowEnd = func() {
		rec.MarkEnd()
		if path != nil {
			path.MarkEnd()
		}
		if end != nil {
			end()
		}
	}
	res, err := loadgen.Run(ctx, cfg)
	rec.MarkEnd()
	sys := rec.Stop()
	if path != nil {
		path.MarkEnd()
		sys.Summary.Path = path.Stop()
	}
	if err != nil {
		return nil, nil, err
	}
	return res, sys, nil
}

// RemoteTarget is the address and port a load test of cfg dials, when it
// is another machine's: not a loopback address, nor one of this
// machine's. Only the live machine's probe (root "/") asks; a name that
// does not resolve is not remote (the load test fails on it anyway).
func RemoteTarget(ctx context.Context, cfg loadgen.Config, root string) (netip.AddrPort, bool) {
	if root != "/" && root != "" {
		return netip.AddrPort{}, false
	}
	tg, err := report.ParseTarget(cfg.URL)
	if err != nil {
		return netip.AddrPort{}, false
	}
	var ip net.IP
	switch {
	case len(cfg.Addrs) > 0:
		ip = cfg.Addrs[0]
	default:
		ip = net.ParseIP(strings.Trim(tg.Host, "[]"))
		if ip == nil {
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			addrs, err := net.DefaultResolver.LookupIPAddr(rctx, tg.Host)
			if err != nil || len(addrs) == 0 {
				return netip.AddrPort{}, false
			}
			ip = addrs[0].IP
			for _, a := range addrs { // the address the load generator picks
				if a.IP.To4() != nil {
					ip = a.IP
					break
				}
			}
		}
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.AddrPort{}, false
	}
	a = a.Unmap()
	if a.IsLoopback() || a.IsUnspecified() || localAddr(a) {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, uint16(tg.Port)), true
}

// localAddr reports whether a is one of this machine's addresses.
func localAddr(a netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if b, ok := netip.AddrFromSlice(n.IP); ok && b.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// judge is the verdict on r, measured by this process below root.
func judge(r Run, root string) *verdict.Verdict {
	v := verdict.Judge(VerdictInput(r, root))
	return &v
}

// VerdictInput is what the verdict on r reads: its figures, and this
// process as the load generator with the cores it may run on when the
// probe read this machine (root "/" or ""). A caller that measured the
// generator's CPU itself sets GeneratorCPU before judging.
func VerdictInput(r Run, root string) verdict.Input {
	in := verdict.Input{Load: r.Load, System: r.System, TargetLoopback: loopbackName(r.Load.Target.Host)}
	if root == "/" || root == "" {
		in.GeneratorPID = os.Getpid() // RunWatches watches it
		in.GeneratorCPUs = affinity()
	}
	return in
}

// loopbackName reports whether host is a name whose addresses are all
// loopback ones (Debian maps the machine's own name to 127.0.1.1): the
// verdict's network rule then leaves the links aside. Addresses and
// localhost the verdict tells itself.
func loopbackName(host string) bool {
	if host == "" || strings.ContainsAny(host, ":[") {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return false
		}
	}
	return true
}

// affinity lists the cores this process may run on; nil when unknown.
func affinity() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var ids []int
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			ids = append(ids, i)
		}
	}
	return ids
}
