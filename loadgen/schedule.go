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

// place is where one connection runs: its thread, counted among its
// event loop's threads, and its slot in the open-loop schedule (the idx
// of firstSend).
type place struct{ thread, slot int }

// layout places conns connections on threads as wrk does (conns/threads
// each, one more on each of the first conns%threads), and the threads on
// loops event loops, thread k on loop k%loops: the connections of each
// loop, its threads' in turn. Slots go round the threads, a connection of
// each in turn, so that requests due one after the other are on
// different threads, and on different loops when there are several.
func layout(conns, threads, loops int) [][]place {
	out := make([][]place, loops)
	size := func(k int) int {
		if k < conns%threads {
			return conns/threads + 1
		}
		return conns / threads
	}
	// Where thread k's connections start in its loop.
	start := make([]int, threads)
	for k := range threads {
		l := k % loops
		start[k] = len(out[l])
		for range size(k) {
			out[l] = append(out[l], place{thread: k / loops})
		}
	}
	slot := 0
	for m := 0; slot < conns; m++ {
		for k := range threads {
			if m < size(k) {
				out[k%loops][start[k]+m].slot = slot
				slot++
			}
		}
	}
	return out
}
