//go:build linux

package loadgen

import (
	"syscall"
	"testing"
	"time"
)

// TestOpenLoopSleepsBetweenSends: one connection at 2,000 requests/s has
// its next send under a millisecond away at every turn of its loop;
// epoll_wait counts in milliseconds, and a loop that used it spun through
// the run, a whole core taken from the server beside it. Sleeping with
// epoll_pwait2 until the send, the run costs the process a fraction of
// that (the server's goroutines here included).
func TestOpenLoopSleepsBetweenSends(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("CPU time: not under the race detector nor in -short (qemu); make test runs it without either")
	}
	if _, e := epollPwait2(-1, make([]syscall.EpollEvent, 1), &kernelTimespec{}); e == syscall.ENOSYS || e == syscall.EPERM {
		t.Skipf("!!! no epoll_pwait2 here (%v): the loop spins through the last millisecond before each send", e)
	}
	url := quietServer(t, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	r := run(t, Config{URL: url, Connections: 1, Threads: 1, Rate: 2000, Duration: time.Second, KeepAlive: true})
	wall := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(syscall.TimevalToNsec(after.Utime) + syscall.TimevalToNsec(after.Stime) -
		syscall.TimevalToNsec(before.Utime) - syscall.TimevalToNsec(before.Stime))
	t.Logf("%d requests at %.0f req/s, %v of CPU in %v", r.Completed, r.RPS(), cpu, wall)
	if r.RPS() < 1900 {
		t.Errorf("%.0f req/s: the schedule of 2000 was not kept", r.RPS())
	}
	if cpu > wall/2 {
		t.Errorf("%v of CPU in %v: the loop spun between its sends", cpu, wall)
	}
}

// TestWaitUnderAMillisecondSleeps: the loop's wait for its next send,
// 700 us away, sleeps that long (epoll_pwait2) instead of returning at
// once to spin (epoll_wait with 0 ms); a whole 3 ms is epoll_wait's.
func TestWaitUnderAMillisecondSleeps(t *testing.T) {
	if _, e := epollPwait2(-1, make([]syscall.EpollEvent, 1), &kernelTimespec{}); e == syscall.ENOSYS || e == syscall.EPERM {
		t.Skipf("!!! no epoll_pwait2 here (%v): the loop spins through the last millisecond before each send", e)
	}
	cfg, tg, err := Config{URL: "http://127.0.0.1/"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorker(&shared{cfg: cfg, req: buildRequest(cfg, tg)}, layout(1, 1, 1)[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(w.epfd)
	for _, wait := range []time.Duration{700 * time.Microsecond, 3 * time.Millisecond} {
		start := time.Now()
		n, err := w.epollWait(int64(wait))
		// Never before the wait is over; a busy box may wake it later.
		if took := time.Since(start); n != 0 || err != nil || took < wait {
			t.Errorf("a wait of %v: %d events, %v, returned after %v", wait, n, err, took)
		}
	}
}
