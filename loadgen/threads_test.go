//go:build linux

package loadgen

import (
	"runtime"
	"testing"
	"time"
)

// TestThreadsShareTheLoops: wrk's -t10 on fewer cores runs its ten
// threads, each with its connection and its own Req/Sec, on one event
// loop per P: a loop more would wait for a P, and its requests would
// count the wait (issue 28).
func TestThreadsShareTheLoops(t *testing.T) {
	srv := nginxLike(t, true)
	procs := runtime.GOMAXPROCS(0)
	threads := 5 * procs
	r := run(t, Config{URL: srv.url("/"), KeepAlive: true, Connections: threads, Threads: threads, Duration: 500 * time.Millisecond})
	if r.Threads != threads || r.Loops != procs || len(r.ThreadRates) != threads {
		t.Fatalf("%d threads on %d loops, %d threads' rates; want %d threads on %d loops", r.Threads, r.Loops, len(r.ThreadRates), threads, procs)
	}
	var sum int64
	for i, slots := range r.ThreadRates {
		var n int64
		for _, c := range slots {
			n += int64(c)
		}
		if n == 0 {
			t.Errorf("thread %d completed nothing: its connection was not its own", i)
		}
		sum += n
	}
	if sum != r.Completed {
		t.Errorf("the threads' rates add up to %d, completed %d", sum, r.Completed)
	}
	// Fewer threads than Ps: a loop each.
	r = run(t, Config{URL: srv.url("/"), KeepAlive: true, Connections: 4, Threads: 1, Duration: 200 * time.Millisecond})
	if r.Threads != 1 || r.Loops != 1 {
		t.Errorf("-t1: %d threads on %d loops", r.Threads, r.Loops)
	}
}
