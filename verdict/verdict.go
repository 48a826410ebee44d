// Package verdict says what limited a load test and whether its figure
// stands: from what the load generator measured (report.LoadResult) and
// what the probe saw over the same window (machine.Report), in the spirit
// of the USE method (utilization, saturation and errors of each
// resource). It is pure: figures in, a Verdict out, no clock, no file.
//
// The thresholds are the fields of Thresholds, their values Default; the
// README's "Verdicts" section has them as a table.
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

// judgement is what Judge works out before it concludes.
type judgement struct {
	cores int
	// server is the server's rows summed (gather), gen the generator's
	// row; servers are the server's rows: what listens on the port, and
	// its upstreams.
	server, gen         *machine.ProcSummary
	servers             []*machine.ProcSummary
	serverCPU, genCPU   float64 // % of one core
	genCap              float64 // % of one core the generator could use
	achieved, offered   float64
	rateShort           bool
	genReason           string
	invalid             []string
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

func (t Thresholds) judge(in Input) judgement {
	j := judgement{busy: -1}
	l := in.Load
	var sum *machine.Summary
	if in.System != nil {
		sum = &in.System.Summary
	}
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

	// The generator: its threads at their limit, or starved on its cores.
	t.generator(in, sum, &j)

	if c := sum; c != nil && c.CPU != nil && j.cores > 0 {
		n := float64(j.cores)
		j.irq = (c.CPU.IRQ.Mean + c.CPU.SoftIRQ.Mean) * n
		j.other = math.Max(j.busy*n-j.serverCPU-j.genCPU-j.irq-c.CPU.Steal.Mean*n, 0)
	}
	// Open loop: the generator's cores shared with other processes.
	t.shared(in, &j)

	// What invalidates the figure.
	if j.serverSeen() && j.busy >= t.CPUBusy && j.other >= t.OtherCPU {
		whose := j.serverName + "'s"
		if len(j.servers) > 1 {
			whose = "the server's (" + j.serverName + ")"
		}
		j.invalid = append(j.invalid, fmt.Sprintf("other processes took %.0f %% of one core while the cores were %.0f %% busy: the figure is not %s alone",
			j.other, j.busy, whose))
	}
	if sum != nil && sum.Throttled != nil && sum.Throttled.Any() {
		j.invalid = append(j.invalid, fmt.Sprintf("the board reported %s during the run (firmware flags): its clock was not its own", sum.Throttled))
	}
	if j.genReason != "" {
		j.invalid = append(j.invalid, j.genReason)
	}
	if j.rateShort {
		j.invalid = append(j.invalid, fmt.Sprintf("offered %s req/s, achieved %.2f req/s (%.0f %%): the rate was not reached",
			trim(j.offered), j.achieved, 100*j.achieved/j.offered))
	}
	failed := l.Failed()
	if tot := l.OK + failed; tot > 0 {
		j.errRatio = 100 * float64(failed) / float64(tot)
	}
	if j.errRatio > t.ErrorRatio {
		j.invalid = append(j.invalid, fmt.Sprintf("%.1f %% of the requests failed (%d of %d), above %s %%", j.errRatio, failed, l.OK+failed, trim(t.ErrorRatio)))
	}
	if why := synRetries(in); why != "" {
		j.invalid = append(j.invalid, why)
	}
	if why := noLatency(l); why != "" {
		j.invalid = append(j.invalid, why)
	} else if n := latencyCount(l); n < t.MinRequests {
		j.invalid = append(j.invalid, fmt.Sprintf("only %d requests measured: the p99 printed needs at least %d", n, t.MinRequests))
	}
	return j
}

// Judge says what limited the run of in and whether its figure stands.
func (t Thresholds) Judge(in Input) Verdict {
	j := t.judge(in)
	v := Verdict{Valid: len(j.invalid) == 0}
	limit := func(by, why string) {
		if v.LimitedBy == "" {
			v.LimitedBy = by
			v.Reasons = append(v.Reasons, why)
		}
	}
	var sum *machine.Summary
	if in.System != nil {
		sum = &in.System.Summary
	}
	l := in.Load

	if j.genReason != "" {
		limit(Generator, j.genReason)
	}
	if j.errRatio > t.ErrorRatio {
		limit(Errors, fmt.Sprintf("%.1f %% of the requests failed (%s)", j.errRatio, describeErrors(l.Errors)))
	}
	if l.Rate > 0 && !j.rateShort {
		limit(Rate, fmt.Sprintf("the offered %s req/s, achieved %.2f req/s", trim(j.offered), j.achieved))
	}
	// The server against the cores it may use: all of them, or those of
	// its affinity (taskset, worker_cpu_affinity, CPUAffinity=).
	serverCores := j.cores
	if j.serverCPUs != nil {
		serverCores = len(j.serverCPUs)
	}
	if j.server != nil && j.server.CPU != nil && serverCores > 0 {
		all := 100 * float64(serverCores)
		switch {
		case j.serverCPU >= all*t.ServerAllCores/100 && j.serverCPUs != nil:
			limit(Server, fmt.Sprintf("%s at %.0f %% of %s, %s it may use", j.serverName, j.serverCPU, cpuList(j.serverCPUs), theCores(serverCores)))
		case j.serverCPU >= all*t.ServerAllCores/100:
			limit(Server, fmt.Sprintf("%s at %.0f %% of the %d cores", j.serverName, j.serverCPU, j.cores))
		}
		// Single-threaded workers at their limit: the server's, or one of
		// its parts' (php-fpm's workers behind nginx).
		parts := []*machine.ProcSummary{j.server}
		if len(j.servers) > 1 {
			parts = append(parts, j.servers...)
		}
		for _, p := range parts {
			if p.CPU == nil {
				continue
			}
			c := p.CPU.Mean
			if k := math.Round(c / 100); k >= 1 && c >= k*t.ServerWholeCore && c <= k*100+3 {
				limit(Server, fmt.Sprintf("%s at %.0f %% of %s (%d process%s): its busy workers each hold a full core",
					p.Name, c, coresText(int(k)), p.Count, pluralES(p.Count)))
			}
		}
	}
	// The server pinned to cores that other processes took: it could not
	// get what its cores had.
	if j.serverCPUs != nil && sum != nil && j.server.CPU != nil {
		busy, n := coresBusy(sum, j.serverCPUs)
		if n == len(j.serverCPUs) && busy >= t.CPUBusy {
			limit(CPU, fmt.Sprintf("%s, %s %s may use, %.0f %% busy, %s %.0f %% of it: other processes took the rest",
				cpuList(j.serverCPUs), theCores(n), j.serverName, busy, j.serverName, j.serverCPU))
		}
	}
	if sum != nil && !loopbackTarget(in) {
		for _, n := range sum.Nets {
			if n.SpeedMbps <= 0 || n.Name == "lo" {
				continue
			}
			dir, mbps := "received", wireMbps(n.RxKBs.Mean, n.RxPps.Mean)
			if tx := wireMbps(n.TxKBs.Mean, n.TxPps.Mean); tx > mbps {
				dir, mbps = "sent", tx
			}
			if speed := float64(n.SpeedMbps); mbps >= speed*t.LinkBusy/100 {
				limit(Network, fmt.Sprintf("%s %s %.1f Mb/s of its %d Mb/s link (%.0f %%)", n.Name, dir, mbps, n.SpeedMbps, 100*mbps/speed))
			}
		}
	}
	if sum != nil {
		for _, d := range sum.Disks {
			if !d.Partition && d.Busy.Mean >= t.DiskBusy {
				limit(Disk, fmt.Sprintf("disk %s %.0f %% busy", d.Name, d.Busy.Mean))
			}
		}
		if p := sum.PSI; p != nil && p.IOSome != nil && p.IOSome.Mean >= t.IOPressure {
			limit(Disk, fmt.Sprintf("IO pressure %.0f %% (some tasks stalled on IO)", p.IOSome.Mean))
		}
		if p := sum.PSI; p != nil && p.MemSome != nil && p.MemSome.Mean >= t.MemPressure {
			limit(Memory, fmt.Sprintf("memory pressure %.0f %% (some tasks stalled on memory)", p.MemSome.Mean))
		}
		if m := sum.Mem; m != nil && m.Available != nil && m.Total > 0 {
			if pct := 100 * m.Available.Mean / float64(m.Total); pct < t.MemAvailable {
				limit(Memory, fmt.Sprintf("%.1f %% of memory available", pct))
			}
		}
		if c := sum.CPU; c != nil && c.Steal.Mean >= t.Steal {
			limit(CPU, fmt.Sprintf("the host took %.0f %% of the CPU (steal)", c.Steal.Mean))
		}
		if j.busy >= t.CPUBusy && j.cores > 0 {
			switch {
			case !j.serverSeen():
				limit(CPU, fmt.Sprintf("the cores were %.0f %% busy: %s (--watch the server to tell it from other processes)", j.busy, j.cpuShares(sum)))
			case j.other >= t.OtherCPU:
				limit(CPU, fmt.Sprintf("the cores were %.0f %% busy, other processes took them: %s", j.busy, j.cpuShares(sum)))
			default:
				limit(CPU, fmt.Sprintf("the cores were %.0f %% busy, shared by the server and edgebench: %s", j.busy, j.cpuShares(sum)))
			}
		}
		// A core held while the machine was not: a single thread's limit,
		// the server's when it is not watched to say so.
		if !j.serverSeen() && j.busy >= 0 && j.busy < t.CPUBusy {
			for _, c := range sum.PerCPUBusy {
				if c.Mean >= t.CPUBusy {
					limit(CPU, fmt.Sprintf("cpu%d was %.0f %% busy while the machine was %.0f %%: one thread held it (--watch the server to name it)", c.ID, c.Mean, j.busy))
				}
			}
		}
		// A target on another machine: packets lost, or a queue on the
		// path.
		t.pathLimit(in, sum, limit)
		// Close to saturated: more connections add load, not cores.
		if j.busy >= t.CPUNear && j.cores > 0 {
			limit(CPU, fmt.Sprintf("the cores were %.0f %% busy, close to saturated: %s", j.busy, j.cpuShares(sum)))
		}
	}
	// Nothing saturated, yet the run measured something else than the
	// server's work: connects that waited for TCP to send a dropped SYN
	// again (connect.go), or no response at all (noresponse.go).
	if why := synRetries(in); why != "" {
		limit(Server, why)
	}
	if why := noLatency(l); why != "" {
		limit(Server, why)
	}
	server := ""
	if j.serverSeen() {
		server = fmt.Sprintf("%s at %.0f %% CPU, ", j.serverName, j.serverCPU)
	}
	// Whether anything saturated is known only from the machine's CPU
	// figures: none without the probe, nor over a run too short for
	// its rates.
	unseen := ""
	switch {
	case sum == nil:
		unseen = "without the probe, the machine was not seen"
	case sum.CPU == nil:
		unseen = "the run was too short for the probe to see the machine"
	}
	// Nothing saturated: the test's connections, each waiting for its
	// answer, carry what the server's time per request lets them. In
	// open loop the latency counts from the scheduled send: the server's
	// own time is the wait from the request written to the first byte,
	// and a schedule that fell behind by what its connections carry was
	// held by them, probe or not. In closed loop that bound is what the
	// run achieved by its nature: only the probe's figures, nothing
	// saturated, make it the limit.
	if j.rateShort && l.Waiting != nil && l.Waiting.Count() > 0 && l.Waiting.Mean() > 0 {
		wait := l.Waiting.Mean() / 1e6
		what := "no resource saturated"
		if unseen != "" {
			what = unseen
		}
		limit(Connections, fmt.Sprintf("%s%d connection%s at %s per request (request written to first byte) carry at most %.1f req/s; %s: more connections (-c) or a faster server",
			server, l.Connections, plural(l.Connections), fmtSeconds(wait), float64(l.Connections)/wait, what))
	}
	if unseen != "" {
		limit(Server, fmt.Sprintf("%s%d connections, mean latency %s; %s", server, l.Connections, fmtSeconds(l.Latency.Mean()/1e6), unseen))
	}
	if l.Rate <= 0 && l.Latency != nil && l.Latency.Count() > 0 && l.Latency.Mean() > 0 {
		wait := l.Latency.Mean() / 1e6
		limit(Connections, fmt.Sprintf("%s%d connection%s at %s per request carry at most %.1f req/s; no resource saturated: more connections (-c) or a faster server",
			server, l.Connections, plural(l.Connections), fmtSeconds(wait), float64(l.Connections)/wait))
	}
	limit(Server, fmt.Sprintf("%s%d connections, mean latency %s; no resource saturated", server, l.Connections, fmtSeconds(l.Latency.Mean()/1e6)))
	for _, r := range j.invalid {
		if r != v.Reasons[0] {
			v.Reasons = append(v.Reasons, r)
		}
	}
	return v
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
