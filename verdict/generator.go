package verdict

import (
	"fmt"
)

// These are the rules on the load generator, the one edgebench has: the
// first rows of the table (rules.go), with the rule on a generator that
// shared its cores (shared.go). Judge's verdict, GeneratorBound,
// compare's and the capacity search's "the generator limited the search"
// all come from them:
//   - closed loop: its threads at GeneratorBusy % of min(event loops, its
//     cores) (generatorThreads);
//   - open loop: the rate not reached (below RateReached %) while it used
//     3/4 of that: the schedule fell behind because edgebench was busy
//     (generatorBehind). Its CPU alone says nothing in open loop: an
//     event loop spins through the last millisecond before each
//     scheduled send (epoll's timeout is in milliseconds), so one loop at
//     1000 req/s uses a whole core and still sends every request on time;
//   - pinned to some of the cores, those GeneratorStarve % busy while it
//     did not get its share: other processes starved it
//     (generatorStarved).
//
// A schedule that fell behind with edgebench idle is not the
// generator's: its connections each wait for the server's answer, and
// the server's time per request bounds the rate they carry (the
// verdict's "server, latency").

// generatorCPU sets j's generator CPU (the probe's figure of
// GeneratorPID, else Input.GeneratorCPU), whether it is known, the
// threads it could run at once and the CPU they could use, and whether
// it used GeneratorBusy % of that. j's cores and generator process are
// known.
func (t Thresholds) generatorCPU(in Input, j *judgement) {
	l := in.Load
	switch {
	case j.gen != nil && j.gen.CPU != nil:
		j.genCPU, j.genKnown = j.gen.CPU.Mean, true
	case in.GeneratorCPU > 0:
		j.genCPU, j.genKnown = in.GeneratorCPU, true
	}
	genCores := j.cores
	if len(in.GeneratorCPUs) > 0 {
		genCores = len(in.GeneratorCPUs)
	}
	threads := l.Threads
	if threads <= 0 {
		threads = max(l.Connections, 1)
	}
	if genCores > 0 {
		threads = min(threads, genCores)
	}
	j.genThreads = threads
	j.genCap = 100 * float64(threads)
	j.genBusy = j.genKnown && j.genCPU >= j.genCap*t.GeneratorBusy/100
}

// generatorReason is the reason of the first of the table's generator
// rows that applies to j: "" when edgebench was not the limit.
func (t Thresholds) generatorReason(j *judgement) string {
	for _, r := range limits {
		if r.resource != Generator {
			continue
		}
		if why := r.test(t, j); why != "" {
			return why
		}
	}
	return ""
}

// generatorThreads: closed loop, edgebench's threads at their limit.
func (t Thresholds) generatorThreads(j *judgement) string {
	l := j.l
	if !j.genBusy || l.Rate > 0 {
		return ""
	}
	loops := l.Threads
	if l.Loops > 0 {
		loops = l.Loops // -t above the cores: the threads share the loops
	}
	return fmt.Sprintf("edgebench itself used %.0f %% of %s (%d event loop%s): the server's capacity is at least this",
		j.genCPU, coresText(j.genThreads), loops, plural(loops))
}

// generatorBehind: open loop, the schedule fell behind while edgebench
// was busy.
func (t Thresholds) generatorBehind(j *judgement) string {
	if !j.genKnown || !j.rateShort || j.genCPU < j.genCap*0.75 {
		return ""
	}
	return fmt.Sprintf("the schedule fell behind (%.1f of %s req/s) while edgebench used %.0f %% of %s",
		j.achieved, trim(j.offered), j.genCPU, coresText(j.genThreads))
}

// generatorStarved: pinned to some cores, starved when they are busy and
// edgebench does not get what its threads could use.
func (t Thresholds) generatorStarved(j *judgement) string {
	in := j.in
	if j.sum == nil || len(in.GeneratorCPUs) == 0 || len(in.GeneratorCPUs) >= j.cores {
		return ""
	}
	cores, n := coresBusy(j.sum, in.GeneratorCPUs)
	if n == 0 || cores < t.GeneratorStarve || j.genBusy {
		return ""
	}
	return fmt.Sprintf("edgebench may run on %s only, %.0f %% busy, and had %s of it: other processes starved it; the server's capacity is at least this",
		cpuList(in.GeneratorCPUs), cores, pctOrUnknown(j))
}

// pctOrUnknown is the generator's CPU as the reasons print it.
func pctOrUnknown(j *judgement) string {
	if !j.genKnown {
		return "an unknown share"
	}
	return fmt.Sprintf("%.0f %%", j.genCPU)
}
