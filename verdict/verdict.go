// Package verdict says what limited a load test and whether its figure
// stands: from what the load generator measured (report.LoadResult) and
// what the probe saw over the same window (machine.Report), in the spirit
// of the USE method (utilization, saturation and errors of each
// resource). It is pure: figures in, a Verdict out, no clock, no file.
//
// The rules are the rows of a table (rules.go): each names a resource,
// tests the figures and gives its reason with them, and the first that
// applies, by precedence, names the limit. The thresholds are the fields
// of Thresholds, their values Default; the README's "Verdicts" section
// has the rows, by the same names, in the same order.
package verdict

import (
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
)

// What limited a run: Verdict.LimitedBy.
const (
	Server    = "server"    // the watched server process, or its latency with these connections
	Generator = "generator" // edgebench itself: its threads' CPU, or its cores taken by others
	Rate      = "rate"      // open loop: the offered rate, reached
	Disk      = "disk"      // a disk busy, or IO pressure
	Memory    = "memory"    // memory pressure, or little memory available
	Network   = "network"   // a link at its speed (not for loopback targets)
	Errors    = "errors"    // failed requests above the threshold
	CPU       = "cpu"       // the cores as a whole: steal, other processes, or shared by server and generator
	// Connections: nothing saturated, the test's concurrency set the
	// figure: its connections each wait for an answer, and the server's
	// time per request bounds what they carry.
	Connections = "connections"
)

// Verdict is what limited a run and whether its figure stands.
type Verdict struct {
	LimitedBy string   `json:"limited_by"`
	Valid     bool     `json:"valid"`
	Reasons   []string `json:"reasons"` // the first says what limited the run; those that invalidate it come next
}

// GeneratorBound reports whether the load generator was the run's limit.
func (v Verdict) GeneratorBound() bool { return v.LimitedBy == Generator }

// Line is the verdict in one line: "limited by the server (...); valid"
// or "NOT VALID: ...".
func (v Verdict) Line() string {
	if len(v.Reasons) == 0 {
		return "limited by " + v.LimitedBy
	}
	if v.Valid {
		return fmt.Sprintf("limited by %s (%s); valid", v.LimitedBy, v.Reasons[0])
	}
	return fmt.Sprintf("NOT VALID, limited by %s: %s", v.LimitedBy, strings.Join(v.Reasons, "; "))
}

// Input is one run's figures.
type Input struct {
	Load   *report.LoadResult
	System *machine.Report // nil: run without the probe
	// GeneratorPID is the load generator's process among System's watched
	// processes (0: not watched); every other watched process is taken as
	// the server, the first one named in the reasons.
	GeneratorPID int
	// GeneratorCPUs are the cores the generator may run on (its
	// affinity); nil: every core.
	GeneratorCPUs []int
	// Cores is the number of cores online; 0: the cores of System's
	// per-core figures.
	Cores int
	// GeneratorCPU is the generator's CPU over the run measured outside
	// the probe (its own rusage, as a capacity trial's), in % of one
	// core; it counts when System does not report GeneratorPID's CPU.
	// 0: not measured.
	GeneratorCPU float64
	// TargetLoopback says the target's address is a loopback one (the
	// caller resolved its name). A target host written as a loopback
	// address or localhost counts too. The network rule then does not
	// apply: the run's traffic is on lo, and a busy link carried another
	// process's.
	TargetLoopback bool
}

// Thresholds are the limits a verdict applies; Default holds the
// documented ones.
type Thresholds struct {
	GeneratorBusy     float64 // % of its capacity (threads, at most its cores) at which edgebench is the limit
	GeneratorStarve   float64 // % busy of the cores edgebench is pinned to at which it is starved by others
	ServerAllCores    float64 // % of every core at which the server holds the whole machine
	ServerWholeCore   float64 // % of a whole core, per core, at which a server is at a single-threaded limit
	RateReached       float64 // % of the offered rate an open-loop run must achieve
	ErrorRatio        float64 // % of failed requests above which the figure is not valid
	MinRequests       int64   // latency samples below which the percentiles printed mean nothing
	CPUBusy           float64 // % busy of the whole machine at which the cores are saturated
	CPUNear           float64 // % busy of the whole machine at which the cores, not the connections, are called the limit when nothing else is
	Steal             float64 // % steal at which a virtual machine's host takes the cores
	OtherCPU          float64 // % of one core taken by other processes on saturated cores to call them the limit
	DiskBusy          float64 // % busy of a disk
	IOPressure        float64 // % of time some task stalled on IO (PSI)
	MemPressure       float64 // % of time some task stalled on memory (PSI)
	MemAvailable      float64 // % of memory available below which memory is the limit
	LinkBusy          float64 // % of a link's speed, received or sent (with Ethernet framing), at which the network is the limit
	NetworkThresholds         // the path's and two machines' rules (network.go)
}

// Default are the thresholds edgebench uses.
var Default = Thresholds{
	GeneratorBusy: 90, GeneratorStarve: 95,
	ServerAllCores: 90, ServerWholeCore: 90,
	RateReached: 95, ErrorRatio: 1, MinRequests: 100,
	CPUBusy: 95, CPUNear: 80, Steal: 5, OtherCPU: 50,
	DiskBusy: 80, IOPressure: 25, MemPressure: 10, MemAvailable: 5,
	LinkBusy:          90,
	NetworkThresholds: DefaultNetwork,
}

// Judge is Default's verdict on in.
func Judge(in Input) Verdict { return Default.Judge(in) }

// GeneratorBound reports whether the load generator, not the server,
// limited the run of in, with the reason: its threads' CPU at their
// limit, its cores taken by other processes, or (open loop) the rate not
// reached while it was busy. A figure of such a run is a lower bound of
// the server's capacity.
func GeneratorBound(in Input) (bool, string) {
	j := Default.judge(in)
	return j.genReason != "", j.genReason
}

// judgement is a run's figures as the rules read them: what Judge works
// out before the table concludes (rules.go).
type judgement struct {
	in  Input
	l   *report.LoadResult
	sum *machine.Summary // nil: without the probe
	// cores is the machine's cores online.
	cores int
	// server is the server's rows summed (gather), gen the generator's
	// row; servers are the server's rows: what listens on the port, and
	// its upstreams.
	server, gen       *machine.ProcSummary
	servers           []*machine.ProcSummary
	serverCPU, genCPU float64 // % of one core
	// genKnown says genCPU was measured; genThreads are the threads the
	// generator could run at once (its threads, at most its cores),
	// genCap the CPU they could use (% of one core), and genBusy that
	// it used GeneratorBusy % of it.
	genKnown            bool
	genThreads          int
	genCap              float64
	genBusy             bool
	achieved, offered   float64
	rateShort           bool
	genReason           string // the generator's rows' reason: edgebench, not the server, was the limit
	errRatio            float64
	busy                float64 // % of the whole machine, -1 unknown
	serverName, genName string
	// The machine's CPU in % of one core (100 a core): the kernel's
	// interrupts (irq and softirq, where loopback traffic is handled,
	// charged to no process); and other, what is left of the busy cores
	// once the server, edgebench, the interrupts and the host's steal are
	// counted (the server's share too when it is not watched).
	irq, other float64
	// serverCPUs are the cores the server may run on when it may not run
	// on all (its affinity); nil: every core.
	serverCPUs []int
}

// judge works out the figures of in that the rules read, and whether the
// generator's rows apply (genReason).
func (t Thresholds) judge(in Input) judgement {
	j := judgement{in: in, l: in.Load, busy: -1}
	l := in.Load
	var sum *machine.Summary
	if in.System != nil {
		sum = &in.System.Summary
	}
	j.sum = sum
	j.cores = in.Cores
	if j.cores == 0 && sum != nil {
		j.cores = len(sum.PerCPUBusy)
	}
	if sum != nil {
		j.gather(in, sum)
		if c := sum.CPU; c != nil {
			j.busy = 100 - c.Idle.Mean - c.IOWait.Mean
		}
	}
	if j.server != nil {
		j.serverName = j.server.Name
		if j.server.CPU != nil {
			j.serverCPU = j.server.CPU.Mean
		}
		if n := len(j.server.CPUs); n > 0 && (j.cores == 0 || n < j.cores) {
			j.serverCPUs = j.server.CPUs
		}
	}
	j.genName = "edgebench"

	// Offered and achieved rate.
	if l.Rate > 0 {
		j.offered, j.achieved = l.Rate, l.RPS()
		j.rateShort = j.achieved < l.Rate*t.RateReached/100
	}

	// The generator's CPU, and what its threads could use.
	t.generatorCPU(in, &j)

	if c := sum; c != nil && c.CPU != nil && j.cores > 0 {
		n := float64(j.cores)
		j.irq = (c.CPU.IRQ.Mean + c.CPU.SoftIRQ.Mean) * n
		j.other = math.Max(j.busy*n-j.serverCPU-j.genCPU-j.irq-c.CPU.Steal.Mean*n, 0)
	}
	failed := l.Failed()
	if tot := l.OK + failed; tot > 0 {
		j.errRatio = 100 * float64(failed) / float64(tot)
	}
	// The generator's rows of the table, the first: whether edgebench,
	// not the server, was the limit.
	j.genReason = t.generatorReason(&j)
	return j
}

func (j *judgement) serverSeen() bool { return j.server != nil && j.server.CPU != nil }

// cpuShares is who had the cores: "nginx 120 %, edgebench 60 %,
// interrupts 10 %, other processes 8 % of 200 %", and the CPU pressure.
func (j *judgement) cpuShares(sum *machine.Summary) string {
	var s string
	if j.serverSeen() {
		for _, p := range j.servers {
			if p.CPU != nil {
				s += fmt.Sprintf("%s %.0f %%, ", shareName(p), p.CPU.Mean)
			}
		}
		s += fmt.Sprintf("%s %.0f %%, interrupts %.0f %%, other processes %.0f %% of %d %%", j.genName, j.genCPU, j.irq, j.other, 100*j.cores)
	} else {
		s = fmt.Sprintf("%s %.0f %%, interrupts %.0f %%, the server (not watched) and other processes %.0f %% of %d %%", j.genName, j.genCPU, j.irq, j.other, 100*j.cores)
	}
	if psi := sum.PSI; psi != nil && psi.CPUSome != nil {
		s += fmt.Sprintf(", cpu pressure %.0f %%", psi.CPUSome.Mean)
	}
	return s
}

// ethernetFraming is what each packet adds on the wire to the bytes
// /proc/net/dev counts: preamble and start (8), checksum (4), the gap
// between frames (12).
const ethernetFraming = 24

// wireMbps is a link's rate on the wire in Mb/s from its KiB/s and
// packets/s.
func wireMbps(kbs, pps float64) float64 {
	return (kbs*1024 + ethernetFraming*pps) * 8 / 1e6
}

// loopbackTarget reports whether the run's target is on this machine's
// loopback: the caller says so, or the URL's host is a loopback address or
// localhost.
func loopbackTarget(in Input) bool {
	if in.TargetLoopback {
		return true
	}
	h := strings.ToLower(strings.Trim(in.Load.Target.Host, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

func latencyCount(l *report.LoadResult) int64 {
	if l.Latency == nil {
		return 0
	}
	return l.Latency.Count()
}

func describeErrors(e report.Errors) string {
	var parts []string
	add := func(n int64, name string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	add(e.Connect, "connect")
	add(e.Read, "read")
	add(e.Write, "write")
	add(e.Timeout, "timeout")
	add(e.Status, "status")
	add(e.Length, "length")
	add(e.TLS, "tls")
	add(e.Reset, "reset")
	return strings.Join(parts, ", ")
}

func coresText(n int) string {
	if n == 1 {
		return "one core"
	}
	return fmt.Sprintf("%d cores", n)
}

func theCores(n int) string {
	if n == 1 {
		return "the one core"
	}
	return fmt.Sprintf("the %d cores", n)
}

// coresBusy is how busy the cores ids were, on average, and how many of
// them the probe saw.
func coresBusy(sum *machine.Summary, ids []int) (mean float64, n int) {
	for _, id := range ids {
		for _, c := range sum.PerCPUBusy {
			if c.ID == id {
				mean += c.Mean
				n++
			}
		}
	}
	if n > 0 {
		mean /= float64(n)
	}
	return mean, n
}

func cpuList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprintf("cpu%d", id)
	}
	return strings.Join(s, ",")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pluralES(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}

func trim(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

func fmtSeconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2fs", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.2fms", s*1e3)
	default:
		return fmt.Sprintf("%.0fus", s*1e6)
	}
}
