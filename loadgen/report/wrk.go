package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// WrkOptions are the flags of wrk that change its report.
type WrkOptions struct {
	Latency  bool // --latency: the Latency Distribution
	NoHeader bool // leave out "Running ... test" and the threads line (printed before the run)
}

// WriteWrkHeader writes the two lines wrk prints before its run:
// "Running 30s test @ URL" and "  T threads and C connections".
func WriteWrkHeader(w io.Writer, d time.Duration, url string, threads, connections int) error {
	_, err := fmt.Fprintf(w, "Running %s test @ %s\n  %d threads and %d connections\n",
		wrkTimeS.format(d.Seconds(), 0), url, threads, connections)
	return err
}

// WriteWrk writes the report of wrk 4 line for line: the same labels,
// widths and units (wrk's us/ms/s/m, its 1000-based k and M for counts and
// 1024-based K, M, G for bytes), the Latency Distribution only when asked
// for, "Socket errors" and "Non-2xx or 3xx responses" only when there were
// any. As in wrk, the latency figures include wrk's correction for
// coordinated omission, and Req/Sec is the distribution of each thread's
// rate sampled every 100 ms. Every figure is over the measured window.
// Where wrk prints a latency of 0.00us for a window without one (no
// response completed), its cells are "-" and a line after the requests
// says why.
func WriteWrk(w io.Writer, r *LoadResult, o WrkOptions) error {
	var b strings.Builder
	if !o.NoHeader {
		WriteWrkHeader(&b, r.Duration, r.Target.URL, r.Threads, r.Connections)
	}
	lat := r.Latency
	if r.Rate == 0 && r.Connections > 0 && r.Completed/int64(r.Connections) > 0 {
		lat = wrkCorrected(lat, r.Duration.Microseconds()/(r.Completed/int64(r.Connections)))
	}
	fmt.Fprintf(&b, "  Thread Stats%6s%11s%8s%12s\n", "Avg", "Stdev", "Max", "+/- Stdev")
	noLatency := r.NoLatency()
	if noLatency != "" {
		// wrk prints 0.00us, figures no request backs.
		fmt.Fprintf(&b, "    %-10s%6s  %8s  %7s  %8s\n", "Latency", "-", "-", "-", "-")
	} else {
		mean, sd := lat.Mean(), lat.StdDev()
		fmt.Fprintf(&b, "    %-10s%s%s%s%s\n", "Latency", wrkCell(wrkTime(mean), 8), wrkCell(wrkTime(sd), 10),
			wrkCell(wrkTime(float64(lat.Max())), 9), wrkPct(withinStdev(lat), lat.Count()))
	}
	rs := wrkReqPerSec(r)
	mean, sd, mx, within := sampleStats(rs)
	fmt.Fprintf(&b, "    %-10s%s%s%s%s\n", "Req/Sec", wrkCell(wrkMetric.format(mean, 2), 8),
		wrkCell(wrkMetric.format(sd, 2), 10), wrkCell(wrkMetric.format(mx, 2), 9), wrkPct(within, int64(len(rs))))
	if o.Latency {
		b.WriteString("  Latency Distribution\n")
		for _, p := range []float64{50, 75, 90, 99} {
			if noLatency != "" {
				fmt.Fprintf(&b, "%7.0f%%%8s\n", p, "-")
				continue
			}
			fmt.Fprintf(&b, "%7.0f%%%s\n", p, wrkCell(wrkTime(float64(lat.Quantile(p/100))), 10))
		}
	}
	fmt.Fprintf(&b, "  %d requests in %s, %sB read\n", r.Completed, wrkTime(float64(r.Duration.Microseconds())), wrkBinary.format(float64(r.Bytes), 2))
	if noLatency != "" {
		fmt.Fprintf(&b, "  No latency: %s\n", noLatency)
	}
	e := r.Errors
	if e.Socket() > 0 {
		// wrk counts a failed TLS handshake as a connect error.
		fmt.Fprintf(&b, "  Socket errors: connect %d, read %d, write %d, timeout %d\n", e.Connect+e.TLS, e.Read+e.Reset+e.Limit, e.Write, e.Timeout)
	}
	if e.Status > 0 {
		fmt.Fprintf(&b, "  Non-2xx or 3xx responses: %d\n", e.Status)
	}
	fmt.Fprintf(&b, "Requests/sec: %9.2f\n", r.RPS())
	fmt.Fprintf(&b, "Transfer/sec: %10sB\n", wrkBinary.format(perSecond(r.Bytes, r.Duration), 2))
	_, err := io.WriteString(w, b.String())
	return err
}

// wrkPct is wrk's "+/- Stdev" cell: a share of n values, or -nan, as
// wrk's 0/0 prints, when there is none.
func wrkPct(v float64, n int64) string {
	if n == 0 {
		return "    -nan%"
	}
	return fmt.Sprintf("%8.2f%%", v)
}

// wrkReqPerSec is wrk's Req/Sec sample set: every 100 ms, each thread's
// responses since its last sample divided by the time since it, in
// whole requests per second (a thread with none takes no sample then).
// Only the slots wholly inside the window count. A LoadResult without
// ThreadRates (rebuilt from the wire) has each second's completions
// divided among the threads instead.
func wrkReqPerSec(r *LoadResult) []float64 {
	var xs []float64
	full := int(r.Duration / RateSlot)
	for _, slots := range r.ThreadRates {
		gap := 0
		for _, n := range slots[:min(full, len(slots))] {
			gap++
			if n > 0 {
				xs = append(xs, math.Floor(float64(n)/float64(gap)*float64(time.Second/RateSlot)))
				gap = 0
			}
		}
	}
	if len(r.ThreadRates) > 0 || r.Threads == 0 {
		return xs
	}
	seconds := int(r.Duration / time.Second)
	for _, s := range r.Timeline {
		if s.T < seconds || seconds == 0 {
			xs = append(xs, float64(s.Completed)/float64(r.Threads))
		}
	}
	return xs
}

// sampleStats are the mean, sample standard deviation, maximum and the
// share (%) of values within one standard deviation of the mean, as wrk
// computes them; all 0 without values.
func sampleStats(xs []float64) (mean, sd, mx, within float64) {
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	for _, x := range xs {
		mean += x
		mx = math.Max(mx, x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	if len(xs) > 1 {
		sd = math.Sqrt(sd / float64(len(xs)-1))
	} else {
		sd = 0
	}
	for _, x := range xs {
		if x >= mean-sd && x <= mean+sd {
			within++
		}
	}
	return mean, sd, mx, 100 * within / float64(len(xs))
}

// withinStdev is the share (%) of values within one standard deviation of
// the mean, as wrk's "+/- Stdev" column.
func withinStdev(h *Histogram) float64 {
	if h.Count() == 0 {
		return 0
	}
	mean, sd := h.Mean(), h.StdDev()
	var n int64
	h.ForEach(func(v, c int64) {
		if math.Abs(float64(v)-mean) <= sd {
			n += c
		}
	})
	return 100 * float64(n) / float64(h.Count())
}

// wrkCorrected is a copy of h with wrk 4's correction for coordinated
// omission: a latency v of at least twice the expected interval between
// two requests of a connection adds, for the requests it held back, the
// latencies v-e, v-2e, ... down to more than e, as many times as v was
// recorded. wrk's expected interval is the window over the requests per
// connection.
func wrkCorrected(h *Histogram, e int64) *Histogram {
	c := NewHistogram(h.max, h.digits)
	c.Merge(h)
	if e <= 0 {
		return c
	}
	for i, n := range h.counts {
		v := h.valueAt(i)
		if n == 0 || v < 2*e {
			continue
		}
		// The points v-e, v-2e, ... bucket by bucket, from the top.
		for m := v - e; m > e; {
			j := c.index(m)
			lo := max(c.valueAt(j), e+1)
			k := (m-lo)/e + 1
			c.counts[j] += n * k
			c.total += n * k
			c.min = min(c.min, m-(k-1)*e)
			m -= k * e
		}
	}
	return c
}

// wrkUnits is one of wrk's unit scales (units.c).
type wrkUnits struct {
	scale float64
	base  string
	units []string
}

var (
	wrkTimeUS = wrkUnits{1000, "us", []string{"ms", "s"}}
	wrkTimeS  = wrkUnits{60, "s", []string{"m", "h"}}
	wrkBinary = wrkUnits{1024, "", []string{"K", "M", "G", "T", "P"}}
	wrkMetric = wrkUnits{1000, "", []string{"k", "M", "G", "T", "P"}}
)

// format is wrk's format_units: the next unit up from 85 % of the scale
// on, never the last unit of the list.
func (u wrkUnits) format(n float64, prec int) string {
	unit := u.base
	for i := 0; i+1 < len(u.units) && n >= u.scale*0.85; i++ {
		n /= u.scale
		unit = u.units[i]
	}
	return strconv.FormatFloat(n, 'f', prec, 64) + unit
}

// wrkTime formats microseconds as wrk's format_time_us: us and ms, then
// s and m from a second on.
func wrkTime(us float64) string {
	if us >= 1e6 {
		return wrkTimeS.format(us/1e6, 2)
	}
	return wrkTimeUS.format(us, 2)
}

// wrkCell is wrk's print_units: msg right-aligned so that its number ends
// two characters before the cell's end, its unit taking those.
func wrkCell(msg string, width int) string {
	pad := 2
	for _, c := range []byte{msg[len(msg)-1], msg[len(msg)-2]} {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			pad--
		}
	}
	return fmt.Sprintf("%*.*s%s", width-pad, width-pad, msg, "  "[:pad])
}
