package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
)

// This file is the network in the verdict: the path between the load
// generator and a target on another machine (its round-trip time under
// load against idle, TCP retransmissions), and the judgement of a run
// across two machines (JudgeTwo), which weighs the loader's machine, the
// target's and the link between them.

// NetworkThresholds are the limits of the network's rules; Default
// holds the documented ones (DefaultNetwork).
type NetworkThresholds struct {
	// RTTGrowth: the handshakes' median round-trip time under load at
	// least this many times the idle one has grown...
	RTTGrowth float64
	// ...by at least RTTQueueMS (a queue of 5 ms is 62 KB at 100 Mb/s:
	// a link at its speed behind a FIFO), or by at least RTTMinMS and
	// RTTShare % of a request's mean latency (the path's queue is a good
	// part of each request's time).
	RTTQueueMS float64
	RTTMinMS   float64
	RTTShare   float64
	// RetransPct: a machine that retransmitted at least this % of the
	// TCP segments it sent, and at least RetransMin of them, lost
	// packets on the way.
	RetransPct float64
	RetransMin float64
	// FlatRSD: the rate "stayed flat" when the relative standard
	// deviation of the completed requests of each full second is at
	// most this %.
	FlatRSD float64
	// ServerIdle: a watched server under this % of one core is idle,
	// and never called the limit.
	ServerIdle float64
}

// DefaultNetwork are the network thresholds edgebench uses.
var DefaultNetwork = NetworkThresholds{RTTGrowth: 3, RTTQueueMS: 5, RTTMinMS: 0.2, RTTShare: 25,
	RetransPct: 1, RetransMin: 10, FlatRSD: 10, ServerIdle: 20}

// TwoInput is a run across two machines: the loader's run (Loader: its
// load test, its machine as its probe saw it, with the round-trip time to
// the target, and its generator) and the target's machine over the same
// window, as the target's watch saw it, its watched processes being the
// server.
type TwoInput struct {
	Loader Input
	// Target is the target's machine over the load's window; nil: not
	// watched (JudgeTwo is then Judge of Loader).
	Target *machine.Report
	// TargetCores is the target's cores online; 0: those of Target's
	// per-core figures.
	TargetCores int
}

// JudgeTwo is Default's judgement of a run across two machines.
func JudgeTwo(in TwoInput) Verdict { return Default.JudgeTwo(in) }

// machineSide is one machine of a two-machine run, as the verdict reads it.
type machineSide struct {
	what  string // "the loader", "the target"
	sum   *machine.Summary
	cores int
	busy  float64 // % of the machine, -1 unknown
	irq   float64 // % of one core: interrupts
	steal float64 // % of one core
	// The target's server: its first watched process.
	server     *machine.ProcSummary
	serverCPU  float64
	serverCPUs []int // its affinity, when not every core
	// other is what is left of the busy cores once the server (or, on
	// the loader, edgebench), the interrupts and the steal are counted,
	// in % of one core.
	other float64
}

func newSide(what string, r *machine.Report, cores int, own float64) machineSide {
	s := machineSide{what: what, busy: -1, cores: cores}
	if r == nil {
		return s
	}
	s.sum = &r.Summary
	if s.cores == 0 {
		s.cores = len(s.sum.PerCPUBusy)
	}
	if c := s.sum.CPU; c != nil {
		s.busy = 100 - c.Idle.Mean - c.IOWait.Mean
		n := float64(s.cores)
		s.irq, s.steal = (c.IRQ.Mean+c.SoftIRQ.Mean)*n, c.Steal.Mean*n
		s.other = math.Max(s.busy*n-own-s.irq-s.steal, 0)
	}
	return s
}

// twoJudgement is a run across two machines as its rules read it.
type twoJudgement struct {
	in TwoInput
	l  *report.LoadResult
	// jl is the loader's run as Judge reads it: the loader's rows of the
	// table read it.
	jl             judgement
	loader, target machineSide
	serverSeen     bool   // the target's server watched, its CPU known
	serverName     string // its first watched process's, else "the server"
}

// twoRule is a row of the table of a run across two machines.
type twoRule = rule[twoJudgement]

// onLoader are the rows of rows whose resource is one of resources (all
// of them without resources), read on a two-machine run's loader.
func onLoader(rows []oneRule, resources ...string) []twoRule {
	var out []twoRule
	for _, r := range rows {
		if resources != nil && !slices.Contains(resources, r.resource) {
			continue
		}
		test := r.test
		out = append(out, twoRule{r.precedence, r.name, r.resource, func(t Thresholds, j *twoJudgement) string { return test(t, &j.jl) }})
	}
	return out
}

// twoLimits are the rules on what limited a run across two machines
// (JudgeTwo): the loader's generator, errors and rate first, as on one
// machine (their rows, read on the loader), then the target's server at
// its cores, a link at its speed on either machine, the target's disk
// and memory, either machine's cores, packets lost or a queue on the
// path, and, when neither machine was saturated and the rate stayed flat,
// the link or something between the machines. A server that was idle is
// never called the limit.
var twoLimits = table(append(onLoader(limits, Generator, Errors, Rate),
	twoRule{70, "server, all cores", Server, Thresholds.targetAllCores},
	twoRule{80, "server, whole cores", Server, Thresholds.targetWholeCores},
	twoRule{90, "server, its cores", CPU, Thresholds.targetCoresTaken},
	twoRule{100, "network", Network, Thresholds.eitherLink},
	twoRule{110, "disk", Disk, Thresholds.targetDisk},
	twoRule{120, "memory", Memory, Thresholds.targetMemory},
	twoRule{140, "cpu, steal or saturated", CPU, Thresholds.eitherSaturated},
	twoRule{150, "cpu, one core", CPU, Thresholds.targetCoreHeld},
	twoRule{160, "network, the path", Network, Thresholds.eitherPath},
	twoRule{170, "cpu, close to saturated", CPU, Thresholds.eitherNear},
	twoRule{175, "network, between the machines", Network, Thresholds.between},
	twoRule{200, "connections", Connections, Thresholds.twoConnections},
	twoRule{210, "server, not idle", Server, Thresholds.serverNotIdle},
	twoRule{230, "connections, nothing measured", Connections, Thresholds.nothingMeasured},
)...)

// twoInvalidations are the loader's invalidations, then the target's.
var twoInvalidations = table(append(onLoader(invalidations),
	twoRule{90, "throttling, the target", "", Thresholds.targetThrottled},
	twoRule{100, "other processes, the target", "", Thresholds.targetOthers},
)...)

// JudgeTwo says what limited a run across two machines and whether its
// figure stands, by the rows of twoLimits and twoInvalidations.
func (t Thresholds) JudgeTwo(in TwoInput) Verdict {
	if in.Target == nil {
		return t.Judge(in.Loader)
	}
	j := t.judgeTwo(in)
	by, why := decide(t, twoLimits, &j)
	return verdictOf(by, why, reasons(t, twoInvalidations, &j))
}

// judgeTwo works out the figures of in that the rules read.
func (t Thresholds) judgeTwo(in TwoInput) twoJudgement {
	jl := t.judge(in.Loader)
	j := twoJudgement{in: in, l: in.Loader.Load, jl: jl,
		loader: newSide("the loader", in.Loader.System, jl.cores, jl.genCPU),
		target: newSide("the target", in.Target, in.TargetCores, 0)}
	target := &j.target
	if ps := target.sum.Procs; len(ps) > 0 {
		target.server = &ps[0]
		for i := range ps {
			if ps[i].CPU != nil {
				target.serverCPU += ps[i].CPU.Mean // every watched process is the server's
			}
		}
		if n := len(target.server.CPUs); n > 0 && (target.cores == 0 || n < target.cores) {
			target.serverCPUs = target.server.CPUs
		}
		target.other = math.Max(target.other-target.serverCPU, 0)
	}
	j.serverSeen = target.server != nil && target.server.CPU != nil
	j.serverName = "the server"
	if target.server != nil {
		j.serverName = target.server.Name
	}
	return j
}

// targetThrottled: the target's firmware reported throttling.
func (t Thresholds) targetThrottled(j *twoJudgement) string {
	target := j.target
	if target.sum.Throttled != nil && target.sum.Throttled.Any() {
		return fmt.Sprintf("the target reported %s during the run (firmware flags): its clock was not its own", target.sum.Throttled)
	}
	return ""
}

// targetOthers: other processes on the target's saturated cores.
func (t Thresholds) targetOthers(j *twoJudgement) string {
	if target := j.target; j.serverSeen && target.busy >= t.CPUBusy && target.other >= t.OtherCPU {
		return fmt.Sprintf("other processes took %.0f %% of one core on the target while its cores were %.0f %% busy: the figure is not %s's alone",
			target.other, target.busy, j.serverName)
	}
	return ""
}

// The target's server at its cores: server.go's rules, on the target.

func (t Thresholds) targetAllCores(j *twoJudgement) string {
	if !j.serverSeen {
		return ""
	}
	return t.allCores(j.serverName, j.target.serverCPU, j.target.serverCPUs, j.target.cores, "the target")
}

func (t Thresholds) targetWholeCores(j *twoJudgement) string {
	if !j.serverSeen || serverCores(j.target.serverCPUs, j.target.cores) == 0 {
		return ""
	}
	return t.wholeCores(j.serverName, j.target.serverCPU, j.target.server.Count, "the target")
}

func (t Thresholds) targetCoresTaken(j *twoJudgement) string {
	if !j.serverSeen || j.target.serverCPUs == nil {
		return ""
	}
	return t.coresTaken(j.target.sum, j.serverName, j.target.serverCPU, j.target.serverCPUs, "the target")
}

// eitherLink: a link at its speed, on either machine.
func (t Thresholds) eitherLink(j *twoJudgement) string {
	for _, s := range []machineSide{j.target, j.loader} {
		if why := t.busyLink(s.sum, s.what); why != "" {
			return why
		}
	}
	return ""
}

// The target's disk and memory: resources.go's rules, on the target.

func (t Thresholds) targetDisk(j *twoJudgement) string { return t.diskBusy(j.target.sum, "the target") }
func (t Thresholds) targetMemory(j *twoJudgement) string {
	return t.memoryShort(j.target.sum, "the target")
}

// eitherSaturated: either machine's cores, taken by its host (steal) or
// saturated.
func (t Thresholds) eitherSaturated(j *twoJudgement) string {
	for _, s := range []machineSide{j.target, j.loader} {
		if s.sum == nil || s.sum.CPU == nil || s.cores == 0 {
			continue
		}
		if c := s.sum.CPU; c.Steal.Mean >= t.Steal {
			return fmt.Sprintf("%s's host took %.0f %% of its CPU (steal)", s.what, c.Steal.Mean)
		}
		if s.busy >= t.CPUBusy {
			return fmt.Sprintf("%s's cores were %.0f %% busy: %s", s.what, s.busy, shares(s, j.serverName, j.jl.genCPU))
		}
	}
	return ""
}

// targetCoreHeld: a core of the target held while the machine was not: a
// single thread's limit, the server's when it is not watched to say so.
func (t Thresholds) targetCoreHeld(j *twoJudgement) string {
	target := j.target
	if !j.serverSeen && target.busy >= 0 && target.busy < t.CPUBusy {
		for _, c := range target.sum.PerCPUBusy {
			if c.Mean >= t.CPUBusy {
				return fmt.Sprintf("the target's cpu%d was %.0f %% busy while the machine was %.0f %%: one thread held it (watch the server to name it)", c.ID, c.Mean, target.busy)
			}
		}
	}
	return ""
}

// eitherPath: packets lost between the machines, or a queue on the path.
func (t Thresholds) eitherPath(j *twoJudgement) string {
	for _, s := range []machineSide{j.target, j.loader} {
		if why, ok := t.retransmitted(s); ok {
			return why
		}
	}
	if why, ok := t.pathQueue(j.in.Loader.System, j.l); ok {
		return why + t.linkFigures(j.target, j.loader)
	}
	return ""
}

// eitherNear: close to saturated: more load adds to the cores, not to the
// rate.
func (t Thresholds) eitherNear(j *twoJudgement) string {
	for _, s := range []machineSide{j.target, j.loader} {
		if s.sum != nil && s.cores > 0 && s.busy >= t.CPUNear {
			return fmt.Sprintf("%s's cores were %.0f %% busy, close to saturated: %s", s.what, s.busy, shares(s, j.serverName, j.jl.genCPU))
		}
	}
	return ""
}

// between: neither machine saturated, and the rate flat: a bound outside
// both, on the link or in something between them (a switch, a proxy, a
// shaper), or the path's latency with these connections.
func (t Thresholds) between(j *twoJudgement) string {
	l, loader, target := j.l, j.loader, j.target
	if rsd, ok := t.flat(l); ok && loader.roomy(t.CPUNear) && target.roomy(t.CPUNear) {
		return fmt.Sprintf("neither machine was saturated: the link or something between them limited the run (%.0f req/s, each second within %.1f %%; %s; %s%s)",
			l.RPS(), rsd, headroom(loader, "edgebench", j.jl.genCPU), headroom(target, j.serverName, target.serverCPU), t.pathFigures(j.in.Loader.System))
	}
	return ""
}

// serverAt is the target's server's CPU as the last rows begin their
// reasons, "" when it was not watched.
func (j *twoJudgement) serverAt() string {
	if j.serverSeen {
		return fmt.Sprintf("%s at %.0f %% CPU, ", j.serverName, j.target.serverCPU)
	}
	return ""
}

// twoConnections: the connections, each waiting for its answer.
func (t Thresholds) twoConnections(j *twoJudgement) string {
	l := j.l
	if lat := l.Latency; lat != nil && lat.Count() > 0 && lat.Mean() > 0 {
		wait := lat.Mean() / 1e6
		if l.Rate > 0 && l.Waiting != nil && l.Waiting.Count() > 0 && l.Waiting.Mean() > 0 {
			wait = l.Waiting.Mean() / 1e6
		}
		return fmt.Sprintf("%s%d connection%s at %s per request carry at most %.1f req/s; no resource saturated on either machine: more connections (-c)",
			j.serverAt(), l.Connections, plural(l.Connections), fmtSeconds(wait), float64(l.Connections)/wait)
	}
	return ""
}

// serverNotIdle: nothing saturated, no latency: the server, if it was
// not idle.
func (t Thresholds) serverNotIdle(j *twoJudgement) string {
	if j.serverSeen && j.target.serverCPU >= t.ServerIdle {
		return fmt.Sprintf("%s%d connections; no resource saturated on either machine", j.serverAt(), j.l.Connections)
	}
	return ""
}

// nothingMeasured is the last row: it always applies.
func (t Thresholds) nothingMeasured(j *twoJudgement) string {
	return fmt.Sprintf("%s%d connections; no resource saturated on either machine, and no request measured", j.serverAt(), j.l.Connections)
}

// busyLink is the first interface of sum (loopback left out) of known
// speed that ran at LinkBusy % of it or more, received or sent with
// Ethernet's framing, as a reason: "eth0 received 94.1 Mb/s of its 100
// Mb/s link (94 %)". of names the interface's machine, "" for the run's
// own: "the target's eth0 ...", and then a half-duplex link says so.
func (t Thresholds) busyLink(sum *machine.Summary, of string) string {
	if sum == nil {
		return ""
	}
	for _, n := range sum.Nets {
		if n.SpeedMbps <= 0 || n.Name == "lo" {
			continue
		}
		dir, mbps := "received", wireMbps(n.RxKBs.Mean, n.RxPps.Mean)
		if tx := wireMbps(n.TxKBs.Mean, n.TxPps.Mean); tx > mbps {
			dir, mbps = "sent", tx
		}
		if speed := float64(n.SpeedMbps); mbps >= speed*t.LinkBusy/100 {
			half := ""
			if of != "" && n.Duplex == "half" {
				half = ", half duplex"
			}
			return fmt.Sprintf("%s%s %s %.1f Mb/s of its %d Mb/s link%s (%.0f %%)", possessive(of), n.Name, dir, mbps, n.SpeedMbps, half, 100*mbps/speed)
		}
	}
	return ""
}

// linkLimit: a link of this machine at its speed, unless the target is
// on loopback: the run's traffic is on lo, and a busy link carried
// another process's.
func (t Thresholds) linkLimit(j *judgement) string {
	if loopbackTarget(j.in) {
		return ""
	}
	return t.busyLink(j.sum, "")
}

// retransmitted is the reason when a machine retransmitted RetransPct %
// of the TCP segments it sent, and at least RetransMin of them.
func (t Thresholds) retransmitted(s machineSide) (string, bool) {
	if s.sum == nil || s.sum.TCP == nil {
		return "", false
	}
	tcp := s.sum.TCP
	pct, ok := tcp.RetransPct()
	if !ok || pct < t.RetransPct || tcp.Retrans < t.RetransMin {
		return "", false
	}
	return fmt.Sprintf("%s retransmitted %.1f %% of the TCP segments it sent (%.0f of %.0f): packets were lost between the machines",
		s.what, pct, tcp.Retrans, tcp.Out), true
}

// pathQueue is the reason when the round-trip time to the target grew
// under load: its median RTTGrowth times the idle one or more, and by
// RTTQueueMS or more, or by RTTMinMS and RTTShare % of a request's mean
// latency.
func (t Thresholds) pathQueue(sys *machine.Report, l *report.LoadResult) (string, bool) {
	if sys == nil || sys.Summary.Path == nil {
		return "", false
	}
	p := sys.Summary.Path
	if p.Idle == nil || p.Loaded == nil {
		return "", false
	}
	idle, loaded := p.Idle.MedianMS, p.Loaded.MedianMS
	grown := loaded - idle
	if loaded < idle*t.RTTGrowth || grown < t.RTTMinMS {
		return "", false
	}
	share := 0.0
	if l.Latency != nil && l.Latency.Count() > 0 && l.Latency.Mean() > 0 {
		share = 100 * grown / (l.Latency.Mean() / 1e3)
	}
	if grown < t.RTTQueueMS && share < t.RTTShare {
		return "", false
	}
	why := fmt.Sprintf("the round-trip time to %s grew from %s ms idle to %s ms under load (median of %d handshakes, max %s ms)",
		p.Target, msText(idle), msText(loaded), p.Loaded.N, msText(p.Loaded.MaxMS))
	if share >= t.RTTShare {
		why += fmt.Sprintf(", %.0f %% of a request's mean latency", share)
	}
	return why + ": a queue on the path between the machines", true
}

// pathFigures is the round-trip times of the path, for a reason: "; round
// trip 0.31 ms idle, 0.45 ms under load"; "" when not measured.
func (t Thresholds) pathFigures(sys *machine.Report) string {
	if sys == nil || sys.Summary.Path == nil || sys.Summary.Path.Idle == nil || sys.Summary.Path.Loaded == nil {
		return ""
	}
	p := sys.Summary.Path
	return fmt.Sprintf("; round trip %s ms idle, %s ms under load", msText(p.Idle.MedianMS), msText(p.Loaded.MedianMS))
}

// linkFigures is the busiest link of either machine (loopback left
// out), for a reason: "; the target's eth0 sent 94.1 Mb/s".
func (t Thresholds) linkFigures(sides ...machineSide) string {
	best, what := 0.0, ""
	for _, s := range sides {
		if s.sum == nil {
			continue
		}
		for _, n := range s.sum.Nets {
			if n.Name == "lo" {
				continue
			}
			dir, mbps := "received", wireMbps(n.RxKBs.Mean, n.RxPps.Mean)
			if tx := wireMbps(n.TxKBs.Mean, n.TxPps.Mean); tx > mbps {
				dir, mbps = "sent", tx
			}
			if mbps > best {
				speed := ""
				if n.SpeedMbps > 0 {
					speed = fmt.Sprintf(" of its %d Mb/s", n.SpeedMbps)
				}
				best, what = mbps, fmt.Sprintf("; %s's %s %s %.1f Mb/s%s", s.what, n.Name, dir, mbps, speed)
			}
		}
	}
	return what
}

// flat reports whether the completed requests of each full second of the
// window stayed within FlatRSD % of their mean, and their relative
// standard deviation: false with fewer than 3 full seconds. The last
// second of the timeline may be partial and is left out.
func (t Thresholds) flat(l *report.LoadResult) (float64, bool) {
	tl := l.Timeline
	if len(tl) < 4 {
		return 0, false
	}
	full := tl[:len(tl)-1]
	var sum float64
	for _, s := range full {
		sum += float64(s.Completed)
	}
	mean := sum / float64(len(full))
	if mean <= 0 {
		return 0, false
	}
	var ss float64
	for _, s := range full {
		d := float64(s.Completed) - mean
		ss += d * d
	}
	rsd := 100 * math.Sqrt(ss/float64(len(full)-1)) / mean
	return rsd, rsd <= t.FlatRSD
}

// roomy reports whether the machine had room left: its cores as a whole
// and each of them under limit % busy (known).
func (s machineSide) roomy(limit float64) bool {
	if s.sum == nil || s.busy < 0 || s.busy >= limit {
		return false
	}
	for _, c := range s.sum.PerCPUBusy {
		if c.Mean >= limit {
			return false
		}
	}
	return true
}

// shares is who had a machine's cores, for a reason.
func shares(s machineSide, serverName string, genCPU float64) string {
	own, name := genCPU, "edgebench"
	if s.what == "the target" {
		own, name = s.serverCPU, serverName
	}
	return fmt.Sprintf("%s %.0f %%, interrupts %.0f %%, other processes %.0f %% of %d %%", name, own, s.irq, s.other, 100*s.cores)
}

// headroom is a machine's figures when it was not saturated: "the target
// 20 % busy, nginx 15 % of one core".
func headroom(s machineSide, name string, own float64) string {
	return fmt.Sprintf("%s %.0f %% busy, %s %.0f %% of one core", s.what, s.busy, name, own)
}

// msText prints milliseconds with 3 significant digits.
func msText(v float64) string {
	switch {
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// pathLimit is the path's rule on a run whose target is on another
// machine that nobody watched (Judge): packets lost, or a queue on the
// path, as the loader alone sees them.
func (t Thresholds) pathLimit(j *judgement) string {
	in, sum := j.in, j.sum
	if sum == nil || loopbackTarget(in) {
		return ""
	}
	s := newSide("the loader", in.System, 0, 0)
	if why, ok := t.retransmitted(s); ok {
		return why
	}
	if why, ok := t.pathQueue(in.System, in.Load); ok {
		return why + t.linkFigures(s) + " (the target's machine was not watched)"
	}
	return ""
}
