package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriteText writes edgebench's own concise report.
func WriteText(w io.Writer, r *LoadResult) error {
	var b strings.Builder
	mode := "closed loop"
	if r.Rate > 0 {
		mode = fmt.Sprintf("open loop at %s req/s", trimFloat(r.Rate))
	}
	ka := "keep-alive"
	switch {
	case r.H2 != nil:
		ka = fmt.Sprintf("%s, %d streams per connection", r.Protocol, r.H2.Streams)
	case !r.KeepAlive:
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
	if why := r.NoLatency(); why != "" {
		fmt.Fprintf(&b, "  latency     none: %s\n", why)
	} else {
		l := r.Latency
		fmt.Fprintf(&b, "  latency     min %s  mean %s  stdev %s  max %s\n",
			us(l.Min()), usf(l.Mean()), usf(l.StdDev()), us(l.Max()))
		fmt.Fprintf(&b, "              p50 %s  p90 %s  p99 %s  p99.9 %s\n",
			us(l.Quantile(.50)), us(l.Quantile(.90)), us(l.Quantile(.99)), us(l.Quantile(.999)))
	}
	if c := connectsOf(r); r.Connects > 0 && c.Count() > 0 {
		fmt.Fprintf(&b, "  connect     %d opened, mean %s, p99 %s, max %s", r.Connects, usf(c.Mean()), us(c.Quantile(.99)), us(c.Max()))
		if h := r.Handshake; h != nil && h.Count() > 0 {
			fmt.Fprintf(&b, " (TLS handshake: mean %s, max %s)", usf(h.Mean()), us(h.Max()))
		}
		b.WriteByte('\n')
	}
	if t := r.TLS; t != nil {
		fmt.Fprintf(&b, "  tls         %s %s", t.Version, t.Cipher)
		if t.Group != "" {
			fmt.Fprintf(&b, " %s", t.Group)
		}
		resume := "resumption off"
		if t.Resume {
			resume = fmt.Sprintf("%d resumed", t.Resumed)
		}
		fmt.Fprintf(&b, ", %d handshakes (%s)\n", t.Handshakes, resume)
	}
	if h := r.H2; h != nil && (h.GoAways > 0 || h.Retried > 0 || len(h.Resets) > 0) {
		fmt.Fprintf(&b, "  http/2      %d GOAWAY, %d requests sent again", h.GoAways, h.Retried)
		for _, name := range sortedKeys(h.Resets) {
			fmt.Fprintf(&b, ", %d %s", h.Resets[name], name)
		}
		b.WriteByte('\n')
	}
	e := r.Errors
	if e.Total() > 0 {
		fmt.Fprintf(&b, "  errors      connect %d, read %d, write %d, timeout %d, status %d, length %d",
			e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Length)
		if r.TLS != nil || e.TLS > 0 {
			fmt.Fprintf(&b, ", tls %d", e.TLS)
		}
		if r.H2 != nil || e.Reset > 0 {
			fmt.Fprintf(&b, ", reset %d", e.Reset)
		}
		if e.Limit > 0 {
			fmt.Fprintf(&b, ", over a limit %d", e.Limit)
		}
		b.WriteByte('\n')
	}
	if codes := statusLine(r.StatusCodes); codes != "" {
		fmt.Fprintf(&b, "  status      %s\n", codes)
	}
	if d := r.Drained; d.Requests > 0 {
		fmt.Fprintf(&b, "  drained     %d in flight at the end, in no figure above but the bytes read before it: %s\n", d.Requests, drainedLine(d))
	}
	if r.WarmupRequests > 0 {
		fmt.Fprintf(&b, "  warm-up     %s, %d requests, in no figure above\n", seconds(r.Warmup), r.WarmupRequests)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// drainedLine says what became of the drained requests, their failures
// named and counted as the errors line does ("timeout 3").
func drainedLine(d Drained) string {
	line := fmt.Sprintf("%d completed", d.Completed)
	if codes := statusLine(d.StatusCodes); codes != "" {
		line += " (" + codes + ")"
	}
	if d.Errors.Total() > 0 {
		line += ", failed: " + ErrorList(d.Errors)
	}
	if d.Cut > 0 {
		line += fmt.Sprintf(", %d cut at the drain's end", d.Cut)
	}
	return line
}

// ErrorList names e's non-zero counts as the errors line does, "timeout
// 3, tls 1", or "none".
func ErrorList(e Errors) string {
	var parts []string
	for _, f := range []struct {
		n    int64
		name string
	}{{e.Connect, "connect"}, {e.Read, "read"}, {e.Write, "write"}, {e.Timeout, "timeout"}, {e.Status, "status"}, {e.Length, "length"},
		{e.TLS, "tls"}, {e.Reset, "reset"}, {e.Limit, "over a limit"}} {
		if f.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f.name, f.n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// FailureSummary says how the requests of r failed, in the measured
// window and among those drained at its end, in the errors line's terms:
// the one line a run that got no (successful) response exits with.
func FailureSummary(r *LoadResult) string {
	d := r.Drained
	if d.Requests == 0 {
		return "errors: " + ErrorList(r.Errors)
	}
	return fmt.Sprintf("errors in the measured window: %s; drained at the end: %d in flight, %s", ErrorList(r.Errors), d.Requests, drainedLine(d))
}

// connectsOf is the connect times of the connections r opened: its
// per-request histogram (ab's, where a request on a reused connection
// took 0) without the zeros. The text report's connect line and the
// JSON's connect_us both read it.
func connectsOf(r *LoadResult) *Histogram {
	if r.Connect == nil {
		return NewLatencyHistogram()
	}
	return nonZero(r.Connect)
}

func statusLine(m map[int]int64) string {
	var parts []string
	for _, c := range sortedCodes(m) {
		parts = append(parts, fmt.Sprintf("%d: %d", c, m[c]))
	}
	return strings.Join(parts, ", ")
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
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

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// sortedKeys returns the keys of m in increasing order.
func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
