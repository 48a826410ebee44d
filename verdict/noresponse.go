package verdict

import (
	"fmt"

	"github.com/edgebench/edgebench/loadgen/report"
)

// noLatency is the rule on a window without a latency figure: no
// response completed in it (a download still flowing when it closed, a
// server that never answered), or every one took wrk's timeout. The run
// measured no latency, so no reason of the verdict may quote one (a
// "mean latency 0us" that no request backs), and its figure does not
// stand. The reason says what the window did see: the requests still in
// flight at its end and the bytes read, as wrk counts them. "" when the
// window has a latency.
func noLatency(l *report.LoadResult) string {
	why := l.NoLatency()
	if why == "" {
		return ""
	}
	secs := l.Duration.Seconds()
	s := fmt.Sprintf("%s (%.2fs)", why, secs)
	if n := l.Drained.Requests; n > 0 && l.Completed == 0 {
		s += fmt.Sprintf(": %d request%s in flight at its end", n, plural(int(n)))
		if l.Bytes > 0 && secs > 0 {
			s += fmt.Sprintf(", %s read (%s/s)", mib(float64(l.Bytes)), mib(float64(l.Bytes)/secs))
		}
		s += ": a response takes longer than the run (a longer -d measures one)"
	}
	return s
}

// noResponse is noLatency as a row of the table: a limit (the server's,
// which did not answer) and a figure that does not stand.
func (t Thresholds) noResponse(j *judgement) string { return noLatency(j.l) }

// mib is a count of bytes in KiB, MiB or GiB, as the text report prints
// them.
func mib(b float64) string {
	switch {
	case b < 1<<10:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", b/(1<<30))
}
