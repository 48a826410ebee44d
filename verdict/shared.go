package verdict

import "fmt"

// generatorShared is the rule on a load generator that shared its cores
// with other processes in open loop (a capacity trial, run --rate): every
// core edgebench may use CPUBusy % busy, and other processes (neither the
// server, its upstreams, edgebench, the interrupts nor the host's steal)
// took OtherCPU % of one core of them. Its sends then leave late and in
// bursts: the latency, counted from the scheduled send, and the errors of
// a server that limits bursts are the machine's, not the server's, and
// the search for a capacity under an SLO would take them for the
// server's (58 req/s found against nginx limited to 200 while other
// processes held the cores). The figure is a lower bound, as the other
// generator rules say.
//
// A generator pinned to some cores is judged on those by
// generatorStarved. Other processes are told from the server only when the
// server is watched, or when no process of this machine listens on the
// target's port and the target is not on loopback (the server is
// elsewhere).
//
// It is the last of the generator's rows: it applies when the others do
// not.
func (t Thresholds) generatorShared(j *judgement) string {
	in, l := j.in, j.l
	if l.Rate <= 0 || j.busy < 0 || j.cores == 0 {
		return ""
	}
	if len(in.GeneratorCPUs) > 0 && len(in.GeneratorCPUs) < j.cores {
		return ""
	}
	if !j.serverSeen() && (j.server != nil || loopbackTarget(in)) {
		return ""
	}
	if j.busy >= t.CPUBusy && j.other >= t.OtherCPU {
		return fmt.Sprintf("edgebench shared the cores with other processes (%.0f %% busy, other processes %.0f %% of one core): its sends left late; the server's capacity is at least this",
			j.busy, j.other)
	}
	return ""
}
