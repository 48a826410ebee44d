package loadgen

import "time"

// This file is the arithmetic of the open-loop schedule and of the
// measured window, apart from the event loops that follow it, so that its
// edges are tested exactly.

// openLoopInterval is the time in ns between two requests of one
// connection when conns connections send rate requests/s in all: at
// least 1 ns.
func openLoopInterval(conns int, rate float64) int64 {
	return max(int64(float64(conns)*float64(time.Second)/rate), 1)
}

// firstSend is when connection idx (0-based, over every worker) of conns
// sends its first request, in ns from the start of the run, with interval
// between two requests of one connection: request k of the run is due at
// k/rate, and connection idx sends requests idx, idx+conns, idx+2*conns...
func firstSend(idx, conns int, interval int64) int64 {
	return int64(float64(idx) * float64(interval) / float64(conns))
}

// windowEnd is when the measured window ended, in ns from the start of
// the run: at the cancel (abortAt), at the deadline of a timed run that
// reached it, or when its last request ended (the last of -n); never
// after the deadline, whatever the drain took. end is when the run
// stopped, deadline 0 for a run of -n requests, abortAt 0 without a
// cancel, lastEnd 0 when no request of the window ended.
func windowEnd(end, abortAt, deadline, lastEnd int64) int64 {
	winEnd := end
	switch {
	case abortAt > 0:
		winEnd = abortAt
	case deadline > 0 && end >= deadline:
		winEnd = deadline
	case lastEnd > 0:
		winEnd = lastEnd
	}
	if deadline > 0 {
		winEnd = min(winEnd, deadline)
	}
	return winEnd
}
