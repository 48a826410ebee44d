package verdict

import "fmt"

// These are the rules on whether a run's figure stands (the table's
// invalidations, rules.go), and the limits of errors and of the offered
// rate, whose rows say it too.

// otherProcesses: other processes took OtherCPU % of one core of
// saturated cores: the figure is not the server's alone.
func (t Thresholds) otherProcesses(j *judgement) string {
	if j.serverSeen() && j.busy >= t.CPUBusy && j.other >= t.OtherCPU {
		whose := j.serverName + "'s"
		if len(j.servers) > 1 {
			whose = "the server's (" + j.serverName + ")"
		}
		return fmt.Sprintf("other processes took %.0f %% of one core while the cores were %.0f %% busy: the figure is not %s alone",
			j.other, j.busy, whose)
	}
	return ""
}

// throttled: the board's firmware reported throttling during the run.
func (t Thresholds) throttled(j *judgement) string {
	sum := j.sum
	if sum != nil && sum.Throttled != nil && sum.Throttled.Any() {
		return fmt.Sprintf("the board reported %s during the run (firmware flags): its clock was not its own", sum.Throttled)
	}
	return ""
}

// generatorLimited: the generator's rows applied: the figure is a lower
// bound of the server's.
func (t Thresholds) generatorLimited(j *judgement) string { return j.genReason }

// rateReached: open loop, the offered rate reached.
func (t Thresholds) rateReached(j *judgement) string {
	if j.l.Rate > 0 && !j.rateShort {
		return fmt.Sprintf("the offered %s req/s, achieved %.2f req/s", trim(j.offered), j.achieved)
	}
	return ""
}

// rateShortOf: open loop, the offered rate not reached.
func (t Thresholds) rateShortOf(j *judgement) string {
	if j.rateShort {
		return fmt.Sprintf("offered %s req/s, achieved %.2f req/s (%.0f %%): the rate was not reached",
			trim(j.offered), j.achieved, 100*j.achieved/j.offered)
	}
	return ""
}

// errorsLimit: failed requests above ErrorRatio %, by class.
func (t Thresholds) errorsLimit(j *judgement) string {
	if j.errRatio > t.ErrorRatio {
		return fmt.Sprintf("%.1f %% of the requests failed (%s)", j.errRatio, describeErrors(j.l.Errors))
	}
	return ""
}

// tooManyErrors: failed requests above ErrorRatio %, counted.
func (t Thresholds) tooManyErrors(j *judgement) string {
	l := j.l
	failed := l.Failed()
	if j.errRatio > t.ErrorRatio {
		return fmt.Sprintf("%.1f %% of the requests failed (%d of %d), above %s %%", j.errRatio, failed, l.OK+failed, trim(t.ErrorRatio))
	}
	return ""
}

// tooFewRequests: fewer latency samples than MinRequests, the p99
// printed meaningless; a window without any is noResponse's.
func (t Thresholds) tooFewRequests(j *judgement) string {
	if noLatency(j.l) != "" {
		return ""
	}
	if n := latencyCount(j.l); n < t.MinRequests {
		return fmt.Sprintf("only %d requests measured: the p99 printed needs at least %d", n, t.MinRequests)
	}
	return ""
}
