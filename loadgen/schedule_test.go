package loadgen

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// scheduled counts the requests the open-loop schedule of conns
// connections at rate makes due in [from, to) ns.
func scheduled(conns int, rate float64, from, to int64) int64 {
	iv := openLoopInterval(conns, rate)
	var n int64
	for idx := range conns {
		for t := firstSend(idx, conns, iv); t < to; t += iv {
			if t >= from {
				n++
			}
		}
	}
	return n
}

// TestScheduleRate: the open-loop schedule makes exactly rate x window
// requests due in a window, wherever the window lies, and spreads a
// connection's requests evenly between the others': request k of the run
// is due at k/rate. Rates whose interval is not a whole number of ns are
// off by at most the one request the truncation brings forward.
func TestScheduleRate(t *testing.T) {
	for _, tc := range []struct {
		conns int
		rate  float64
		from  time.Duration
		d     time.Duration
		exact bool
	}{
		{1, 200, 0, 2 * time.Second, true},
		{4, 400, 0, time.Second, true},
		{4, 400, 250 * time.Millisecond, time.Second, true},
		{50, 2000, time.Second, 3 * time.Second, true},
		{10, 100_000, 0, time.Second, true},
		{3, 7, 0, 10 * time.Second, false},
		{7, 1000, 123 * time.Millisecond, time.Second, false},
		{1, 0.5, 0, 10 * time.Second, true},
	} {
		got := scheduled(tc.conns, tc.rate, int64(tc.from), int64(tc.from+tc.d))
		want := tc.rate * tc.d.Seconds()
		if tc.exact && float64(got) != want || math.Abs(float64(got)-want) > 1 {
			t.Errorf("%d connections at %v/s: %d due in %v from %v, want %v", tc.conns, tc.rate, got, tc.d, tc.from, want)
		}
	}
	// Even spacing: with 4 connections at 400/s, connection i's first
	// request is at i x 2.5 ms and each then every 10 ms.
	iv := openLoopInterval(4, 400)
	if iv != int64(10*time.Millisecond) {
		t.Errorf("interval %d ns, want 10 ms", iv)
	}
	for i := range 4 {
		if got, want := firstSend(i, 4, iv), int64(i)*int64(2500*time.Microsecond); got != want {
			t.Errorf("connection %d first due at %d ns, want %d", i, got, want)
		}
	}
	if iv := openLoopInterval(1, 1e12); iv != 1 {
		t.Errorf("interval at 1e12/s: %d ns, want the 1 ns floor", iv)
	}
}

// TestWindowEnd: the window ends at the deadline of a timed run that
// reached it, at the last request of an -n run, at a cancel, and never
// after the deadline.
func TestWindowEnd(t *testing.T) {
	const dl = 1000
	for _, tc := range []struct {
		name                            string
		end, abortAt, deadline, lastEnd int64
		want                            int64
	}{
		{"a timed run that reached its deadline", dl + 300, 0, dl, dl - 5, dl},
		{"a timed run stopped at its deadline exactly", dl, 0, dl, dl - 5, dl},
		{"a timed run whose drain took long", dl + 5000, 0, dl, dl - 1, dl},
		{"a timed run that ended a ns before its deadline (-n reached)", dl - 1, 0, dl, dl - 7, dl - 7},
		{"an -n run", 800, 0, 0, 790, 790},
		{"an -n run with no request of the window ended", 800, 0, 0, 0, 800},
		{"a cancel", 900, 600, dl, 590, 600},
		{"a cancel after the deadline", dl + 900, dl + 600, dl, dl - 3, dl},
		{"a cancel of an -n run", 900, 600, 0, 590, 600},
	} {
		if got := windowEnd(tc.end, tc.abortAt, tc.deadline, tc.lastEnd); got != tc.want {
			t.Errorf("%s: window ends at %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestLayout: connections are split among threads as wrk splits them,
// threads among the event loops round the loops, and every schedule slot
// is given once, round the threads.
func TestLayout(t *testing.T) {
	for _, tc := range []struct{ conns, threads, loops int }{
		{10, 10, 2}, {10, 4, 2}, {10, 2, 2}, {7, 3, 3}, {5000, 1, 1}, {11, 4, 3}, {3, 3, 1},
	} {
		l := layout(tc.conns, tc.threads, tc.loops)
		if len(l) != tc.loops {
			t.Fatalf("%+v: %d loops", tc, len(l))
		}
		slots := map[int]bool{}
		perThread := map[[2]int]int{}
		for i, loop := range l {
			for j, p := range loop {
				slots[p.slot] = true
				perThread[[2]int{i, p.thread}]++
				if j > 0 && p.thread < loop[j-1].thread {
					t.Errorf("%+v: loop %d's connections are not its threads' in turn: %v", tc, i, loop)
				}
			}
		}
		if len(slots) != tc.conns {
			t.Errorf("%+v: %d distinct slots, want %d", tc, len(slots), tc.conns)
		}
		if len(perThread) != tc.threads {
			t.Errorf("%+v: %d threads, want %d", tc, len(perThread), tc.threads)
		}
		for k := range tc.threads {
			want := tc.conns / tc.threads
			if k < tc.conns%tc.threads {
				want++
			}
			if got := perThread[[2]int{k % tc.loops, k / tc.loops}]; got != want {
				t.Errorf("%+v: thread %d has %d connections, want %d", tc, k, got, want)
			}
		}
	}
	// 10 connections, 4 threads, 2 loops: threads 0 and 2 on loop 0 (3
	// and 2 connections), 1 and 3 on loop 1; slots 0..3 go to the
	// threads' first connections.
	l := layout(10, 4, 2)
	want := [][]place{
		{{0, 0}, {0, 4}, {0, 8}, {1, 2}, {1, 6}},
		{{0, 1}, {0, 5}, {0, 9}, {1, 3}, {1, 7}},
	}
	if fmt.Sprint(l) != fmt.Sprint(want) {
		t.Errorf("layout(10, 4, 2) = %v, want %v", l, want)
	}
}
