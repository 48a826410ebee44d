package verdict

import "fmt"

// These are the last rows of the table: nothing saturated, and the
// test's connections, each waiting for its answer, carry what the
// server's time per request lets them. In open loop the latency counts
// from the scheduled send: the server's own time is the wait from the
// request written to the first byte, and a schedule that fell behind by
// what its connections carry was held by them, probe or not. In closed
// loop that bound is what the run achieved by its nature: only the
// probe's figures, nothing saturated, make it the limit. Whether anything
// saturated is known only from the machine's CPU figures: none without
// the probe, nor over a run too short for its rates.

// unseen says why nothing is known of the machine; "" when the probe saw
// it.
func (j *judgement) unseen() string {
	switch {
	case j.sum == nil:
		return "without the probe, the machine was not seen"
	case j.sum.CPU == nil:
		return "the run was too short for the probe to see the machine"
	}
	return ""
}

// serverAt is the server's CPU as these rows begin their reasons:
// "nginx at 30 % CPU, ", or "" when it was not watched.
func (j *judgement) serverAt() string {
	if j.serverSeen() {
		return fmt.Sprintf("%s at %.0f %% CPU, ", j.serverName, j.serverCPU)
	}
	return ""
}

// connectionsBehind: open loop, the schedule fell behind by what the
// connections carry at the server's own time per request.
func (t Thresholds) connectionsBehind(j *judgement) string {
	l := j.l
	if j.rateShort && l.Waiting != nil && l.Waiting.Count() > 0 && l.Waiting.Mean() > 0 {
		wait := l.Waiting.Mean() / 1e6
		what := "no resource saturated"
		if u := j.unseen(); u != "" {
			what = u
		}
		return fmt.Sprintf("%s%d connection%s at %s per request (request written to first byte) carry at most %.1f req/s; %s: more connections (-c) or a faster server",
			j.serverAt(), l.Connections, plural(l.Connections), fmtSeconds(wait), float64(l.Connections)/wait, what)
	}
	return ""
}

// machineUnseen: the probe did not see the machine: nothing says what
// saturated.
func (t Thresholds) machineUnseen(j *judgement) string {
	if u := j.unseen(); u != "" {
		l := j.l
		return fmt.Sprintf("%s%d connections, mean latency %s; %s", j.serverAt(), l.Connections, fmtSeconds(l.Latency.Mean()/1e6), u)
	}
	return ""
}

// connectionsCarry: closed loop, nothing saturated: the connections
// carry at most connections ÷ the time per request.
func (t Thresholds) connectionsCarry(j *judgement) string {
	l := j.l
	if l.Rate <= 0 && l.Latency != nil && l.Latency.Count() > 0 && l.Latency.Mean() > 0 {
		wait := l.Latency.Mean() / 1e6
		return fmt.Sprintf("%s%d connection%s at %s per request carry at most %.1f req/s; no resource saturated: more connections (-c) or a faster server",
			j.serverAt(), l.Connections, plural(l.Connections), fmtSeconds(wait), float64(l.Connections)/wait)
	}
	return ""
}

// nothingSaturated is the last row: it always applies.
func (t Thresholds) nothingSaturated(j *judgement) string {
	l := j.l
	return fmt.Sprintf("%s%d connections, mean latency %s; no resource saturated", j.serverAt(), l.Connections, fmtSeconds(l.Latency.Mean()/1e6))
}
