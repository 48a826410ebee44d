package verdict

import (
	"fmt"

	"github.com/edgebench/edgebench/loadgen/report"
)

// synRetryUS is when a connect whose first SYN was dropped completes at
// the earliest: TCP sends it again after its initial timeout, 1 s on
// Linux (then 2 s more: the 3 s mark). A connect of a loopback or a local
// network otherwise takes well under a millisecond.
const synRetryUS = 1_000_000

// slowConnectUS is the typical connect time (the median) above which a
// connect of a second says nothing of dropped SYNs: a link or a TLS
// handshake that slow spreads its connects that far by itself.
const slowConnectUS = 100_000

// synRetries is the rule on connects that waited for TCP to send their
// SYN again: some took a second or more while the typical one took under
// slowConnectUS. A SYN is dropped when the server's listen backlog (the
// connections it has not accepted yet) is full, and on a loopback target
// for no other reason; over a network it may also be lost. Such a run's
// figures count TCP's retry timers (1 s, 3 s) rather than the server's
// work, and more connections would only drop more: the reason names the
// backlog, with where to raise it. "" when no connect waited so.
func synRetries(in Input) string {
	h := in.Load.Connect
	if h == nil {
		return ""
	}
	var opened, retried int64
	h.ForEach(func(v, n int64) {
		if v > 0 {
			opened += n
		}
		if v >= synRetryUS {
			retried += n
		}
	})
	if retried == 0 || typicalConnect(h, opened) >= slowConnectUS {
		return ""
	}
	where := "the server's listen backlog overflowed (a loopback connect loses its SYN for no other reason)"
	if !loopbackTarget(in) {
		where = "the server's listen backlog overflowed, or the network lost them"
	}
	return fmt.Sprintf("%d of %d connects took 1 s or more (slowest %s), TCP's times to send a dropped SYN again (1 s, 3 s): %s; "+
		"its figures count those waits, not the server's work (raise the backlog: nginx's listen ... backlog=N, net.core.somaxconn; or open fewer connections)",
		retried, opened, fmtSeconds(float64(h.Max())/1e6), where)
}

// listenBacklog is synRetries as a row of the table: a limit (the
// server's, its backlog full) and a figure that does not stand.
func (t Thresholds) listenBacklog(j *judgement) string { return synRetries(j.in) }

// typicalConnect is the median of h's values above 0 (the requests that
// opened a connection; opened of them), in microseconds.
func typicalConnect(h *report.Histogram, opened int64) int64 {
	var seen, median int64 = 0, -1
	h.ForEach(func(v, n int64) {
		if v <= 0 || median >= 0 {
			return
		}
		if seen += n; 2*seen >= opened {
			median = v
		}
	})
	return median
}
