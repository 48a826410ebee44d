package loadgen

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// WriteText writes edgebench's own concise report.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	mode := "closed loop"
	if r.Rate > 0 {
		mode = fmt.Sprintf("open loop at %s req/s", trimFloat(r.Rate))
	}
	ka := "keep-alive"
	if !r.KeepAlive {
		ka = "no keep-alive"
	}
	fmt.Fprintf(&b, "%s %s: %d connections, %s, %s, %s\n", r.Method, r.Target.URL, r.Connections, ka, mode, seconds(r.Duration))
	if r.Server != "" {
		fmt.Fprintf(&b, "  server      %s\n", r.Server)
	}
	fmt.Fprintf(&b, "  requests    %d completed, %d ok, %d failed", r.Completed, r.OK, r.Failed())
	if r.Interrupted {
		b.WriteString(" (interrupted)")
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "  throughput  %.2f req/s, %s/s\n", r.RPS(), byteSize(perSecond(r.Bytes, r.Duration)))
	l := r.Latency
	fmt.Fprintf(&b, "  latency     min %s  mean %s  stdev %s  max %s\n",
		us(l.Min()), usf(l.Mean()), usf(l.StdDev()), us(l.Max()))
	fmt.Fprintf(&b, "              p50 %s  p90 %s  p99 %s  p99.9 %s\n",
		us(l.Quantile(.50)), us(l.Quantile(.90)), us(l.Quantile(.99)), us(l.Quantile(.999)))
	if r.Connects > 0 {
		fmt.Fprintf(&b, "  connect     %d opened, mean %s, max %s\n", r.Connects, usf(meanNonZero(r)), us(r.Connect.Max()))
	}
	e := r.Errors
	if e.Total() > 0 {
		fmt.Fprintf(&b, "  errors      connect %d, read %d, write %d, timeout %d, status %d, length %d\n",
			e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Length)
	}
	if codes := statusLine(r.StatusCodes); codes != "" {
		fmt.Fprintf(&b, "  status      %s\n", codes)
	}
	if d := r.Drained; d.Requests > 0 {
		fmt.Fprintf(&b, "  drained     %d in flight at the end, in no figure above: %s\n", d.Requests, drainedLine(d))
	}
	if r.WarmupRequests > 0 {
		fmt.Fprintf(&b, "  warm-up     %s, %d requests, in no figure above\n", seconds(r.Warmup), r.WarmupRequests)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// drainedLine says what became of the drained requests.
func drainedLine(d Drained) string {
	parts := []string{fmt.Sprintf("%d completed", d.Completed)}
	if codes := statusLine(d.StatusCodes); codes != "" {
		parts[0] += " (" + codes + ")"
	}
	e := d.Errors
	for _, f := range []struct {
		n    int64
		name string
	}{{e.Connect, "connect"}, {e.Read, "read"}, {e.Write, "write"}, {e.Timeout, "timeout"}, {e.Status, "status"}, {e.Length, "length"}, {d.Cut, "cut at the drain's end"}} {
		if f.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", f.n, f.name))
		}
	}
	return strings.Join(parts, ", ")
}

// meanNonZero is the mean connect time of the requests that connected.
func meanNonZero(r *Result) float64 {
	if r.Connects == 0 || r.Connect.Count() == 0 {
		return 0
	}
	return r.Connect.Mean() * float64(r.Connect.Count()) / float64(r.Connects)
}

func statusLine(m map[int]int64) string {
	var parts []string
	for _, c := range sortedCodes(m) {
		parts = append(parts, fmt.Sprintf("%d: %d", c, m[c]))
	}
	return strings.Join(parts, ", ")
}

// WriteAB writes the report in the layout of ApacheBench (ab -n ... -c ...).
func WriteAB(w io.Writer, r *Result) error {
	var b strings.Builder
	server := r.Server
	fmt.Fprintf(&b, "Server Software:        %s\n", server)
	fmt.Fprintf(&b, "Server Hostname:        %s\n", r.Target.Host)
	fmt.Fprintf(&b, "Server Port:            %d\n\n", r.Target.Port)
	fmt.Fprintf(&b, "Document Path:          %s\n", r.Target.Path)
	doc := r.DocLength
	if doc < 0 {
		doc = 0
	}
	fmt.Fprintf(&b, "Document Length:        %d bytes\n\n", doc)
	fmt.Fprintf(&b, "Concurrency Level:      %d\n", r.Connections)
	secs := r.Duration.Seconds()
	fmt.Fprintf(&b, "Time taken for tests:   %.3f seconds\n", secs)
	fmt.Fprintf(&b, "Complete requests:      %d\n", r.Completed)
	e := r.Errors
	failed := e.Connect + e.Read + e.Timeout + e.Length
	fmt.Fprintf(&b, "Failed requests:        %d\n", failed)
	if failed > 0 {
		fmt.Fprintf(&b, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n", e.Connect, e.Read, e.Length, e.Timeout)
	}
	fmt.Fprintf(&b, "Write errors:           %d\n", e.Write)
	if e.Status > 0 {
		fmt.Fprintf(&b, "Non-2xx responses:      %d\n", e.Status)
	}
	if r.KeepAlive {
		fmt.Fprintf(&b, "Keep-Alive requests:    %d\n", max(r.Completed-r.Connects, 0))
	}
	fmt.Fprintf(&b, "Total transferred:      %d bytes\n", r.Bytes)
	fmt.Fprintf(&b, "HTML transferred:       %d bytes\n", r.BodyBytes)
	rps := r.RPS()
	fmt.Fprintf(&b, "Requests per second:    %.2f [#/sec] (mean)\n", rps)
	if r.Completed > 0 {
		fmt.Fprintf(&b, "Time per request:       %.3f [ms] (mean)\n", float64(r.Connections)*secs*1000/float64(r.Completed))
		fmt.Fprintf(&b, "Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", secs*1000/float64(r.Completed))
	}
	fmt.Fprintf(&b, "Transfer rate:          %.2f [Kbytes/sec] received\n", perSecond(r.Bytes, r.Duration)/1024)
	if r.Completed > 0 {
		b.WriteString("\nConnection Times (ms)\n")
		b.WriteString("              min  mean[+/-sd] median   max\n")
		for _, row := range []struct {
			name string
			h    *Histogram
		}{{"Connect:", r.Connect}, {"Processing:", r.Processing}, {"Waiting:", r.Waiting}, {"Total:", r.Latency}} {
			h := row.h
			fmt.Fprintf(&b, "%-11s %5s %4s %5.1f %6s %7s\n", row.name,
				ms(h.Min()), msf(h.Mean()), h.StdDev()/1000, ms(h.Quantile(.5)), ms(h.Max()))
		}
		b.WriteString("\nPercentage of the requests served within a certain time (ms)\n")
		for _, p := range []float64{50, 66, 75, 80, 90, 95, 98, 99, 100} {
			v := r.Latency.Quantile(p / 100)
			if p == 100 {
				fmt.Fprintf(&b, " %3s%%  %6s (longest request)\n", trimFloat(p), ms(v))
			} else {
				fmt.Fprintf(&b, "  %2s%%  %6s\n", trimFloat(p), ms(v))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteWrk writes the report in the layout of wrk --latency.
func WriteWrk(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Running %s test @ %s\n", seconds(r.Duration), r.Target.URL)
	fmt.Fprintf(&b, "  %d threads and %d connections\n", r.Threads, r.Connections)
	l := r.Latency
	b.WriteString("  Thread Stats   Avg      Stdev     Max   +/- Stdev\n")
	fmt.Fprintf(&b, "    Latency   %8s %8s %8s %8s\n", wrkTime(l.Mean()), wrkTime(l.StdDev()),
		wrkTime(float64(l.Max())), pct(withinStdev(l)))
	if rs := reqPerSecPerThread(r); len(rs) > 0 {
		mean, sd, mx, within := stats(rs)
		fmt.Fprintf(&b, "    Req/Sec   %8s %8s %8s %8s\n", wrkCount(mean), wrkCount(sd), wrkCount(mx), pct(within))
	}
	b.WriteString("  Latency Distribution\n")
	for _, p := range []float64{50, 75, 90, 99} {
		fmt.Fprintf(&b, "  %3s%% %8s\n", trimFloat(p), wrkTime(float64(l.Quantile(p/100))))
	}
	fmt.Fprintf(&b, "  %d requests in %s, %sB read\n", r.Completed, wrkSeconds(r.Duration), wrkCount(float64(r.Bytes)))
	e := r.Errors
	if e.Socket() > 0 {
		fmt.Fprintf(&b, "  Socket errors: connect %d, read %d, write %d, timeout %d\n", e.Connect, e.Read, e.Write, e.Timeout)
	}
	if e.Status > 0 {
		fmt.Fprintf(&b, "  Non-2xx or 3xx responses: %d\n", e.Status)
	}
	fmt.Fprintf(&b, "Requests/sec: %10.2f\n", r.RPS())
	fmt.Fprintf(&b, "Transfer/sec: %9sB\n", wrkCount(perSecond(r.Bytes, r.Duration)))
	_, err := io.WriteString(w, b.String())
	return err
}

// reqPerSecPerThread is wrk's Req/Sec sample set: each full second's
// completions divided among the threads.
func reqPerSecPerThread(r *Result) []float64 {
	if len(r.Timeline) == 0 || r.Threads == 0 {
		return nil
	}
	full := int(r.Duration / time.Second)
	var xs []float64
	for _, s := range r.Timeline {
		if s.T < full || full == 0 {
			xs = append(xs, float64(s.Completed)/float64(r.Threads))
		}
	}
	return xs
}

func stats(xs []float64) (mean, sd, mx, within float64) {
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
	}
	for _, x := range xs {
		if math.Abs(x-mean) <= sd {
			within++
		}
	}
	return mean, sd, mx, 100 * within / float64(len(xs))
}

// withinStdev is the share of values within one standard deviation of the
// mean, as wrk's "+/- Stdev" column.
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

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "%" }

// wrkTime formats microseconds as wrk does: us, ms, s, m.
func wrkTime(v float64) string {
	switch {
	case v < 1000:
		return fmt.Sprintf("%.2fus", v)
	case v < 1e6:
		return fmt.Sprintf("%.2fms", v/1e3)
	case v < 60e6:
		return fmt.Sprintf("%.2fs", v/1e6)
	default:
		return fmt.Sprintf("%.2fm", v/60e6)
	}
}

func wrkSeconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// wrkCount formats a count with wrk's k, M, G (base 1000 for counts).
func wrkCount(v float64) string {
	switch {
	case v < 1000:
		return fmt.Sprintf("%.2f", v)
	case v < 1e6:
		return fmt.Sprintf("%.2fk", v/1e3)
	case v < 1e9:
		return fmt.Sprintf("%.2fM", v/1e6)
	default:
		return fmt.Sprintf("%.2fG", v/1e9)
	}
}

func byteSize(v float64) string {
	switch {
	case v < 1<<10:
		return fmt.Sprintf("%.0f B", v)
	case v < 1<<20:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	case v < 1<<30:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	default:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	}
}

// us formats microseconds for the edgebench report.
func us(v int64) string { return usf(float64(v)) }

func usf(v float64) string {
	switch {
	case v < 1000:
		return fmt.Sprintf("%.0fus", v)
	case v < 1e6:
		return fmt.Sprintf("%.2fms", v/1e3)
	default:
		return fmt.Sprintf("%.3fs", v/1e6)
	}
}

// ms rounds microseconds to whole milliseconds, as ab prints them.
func ms(v int64) string    { return strconv.FormatInt((v+500)/1000, 10) }
func msf(v float64) string { return strconv.FormatFloat(math.Round(v/1000), 'f', 0, 64) }

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
