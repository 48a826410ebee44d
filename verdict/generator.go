package verdict

import (
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// generator is the rule on the load generator, the one edgebench has:
// Judge's verdict, GeneratorBound, compare's and the capacity search's
// "the generator limited the search" all come from it, with the rule on a
// generator that shared its cores (shared). It sets j's generator
// CPU (the probe's figure of GeneratorPID, else Input.GeneratorCPU), the
// CPU its threads could use and, when edgebench and not the server was
// the limit, the reason:
//   - closed loop: its threads at GeneratorBusy % of min(event loops, its
//     cores);
//   - open loop: the rate not reached (below RateReached %) while it used
//     3/4 of that: the schedule fell behind because edgebench was busy.
//     Its CPU alone says nothing in open loop: an event loop spins
//     through the last millisecond before each scheduled send (epoll's
//     timeout is in milliseconds), so one loop at 1000 req/s uses a whole
//     core and still sends every request on time;
//   - pinned to some of the cores, those GeneratorStarve % busy while it
//     did not get its share: other processes starved it.
//
// A schedule that fell behind with edgebench idle is not the
// generator's: its connections each wait for the server's answer, and
// the server's time per request bounds the rate they carry (the
// verdict's "server, latency").
//
// j's cores, generator process and rates are known.
func (t Thresholds) generator(in Input, sum *machine.Summary, j *judgement) {
	l := in.Load
	known := false
	switch {
	case j.gen != nil && j.gen.CPU != nil:
		j.genCPU, known = j.gen.CPU.Mean, true
	case in.GeneratorCPU > 0:
		j.genCPU, known = in.GeneratorCPU, true
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
	j.genCap = 100 * float64(threads)
	busy := known && j.genCPU >= j.genCap*t.GeneratorBusy/100
	if known {
		switch {
		case busy && l.Rate <= 0:
			loops := l.Threads
			if l.Loops > 0 {
				loops = l.Loops // -t above the cores: the threads share the loops
			}
			j.genReason = fmt.Sprintf("edgebench itself used %.0f %% of %s (%d event loop%s): the server's capacity is at least this",
				j.genCPU, coresText(threads), loops, plural(loops))
		case j.rateShort && j.genCPU >= j.genCap*0.75:
			j.genReason = fmt.Sprintf("the schedule fell behind (%.1f of %s req/s) while edgebench used %.0f %% of %s",
				j.achieved, trim(j.offered), j.genCPU, coresText(threads))
		}
	}
	if j.genReason == "" && sum != nil && len(in.GeneratorCPUs) > 0 && len(in.GeneratorCPUs) < j.cores {
		// Pinned to some cores: starved when they are busy and edgebench
		// does not get what its threads could use.
		cores, n := coresBusy(sum, in.GeneratorCPUs)
		if n > 0 && cores >= t.GeneratorStarve && !busy {
			j.genReason = fmt.Sprintf("edgebench may run on %s only, %.0f %% busy, and had %s of it: other processes starved it; the server's capacity is at least this",
				cpuList(in.GeneratorCPUs), cores, pctOrUnknown(j, known))
		}
	}
}

// pctOrUnknown is the generator's CPU as the reasons print it.
func pctOrUnknown(j *judgement, known bool) string {
	if !known {
		return "an unknown share"
	}
	return fmt.Sprintf("%.0f %%", j.genCPU)
}
