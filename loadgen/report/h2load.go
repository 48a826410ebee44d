package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// WriteH2loadHead writes the lines h2load 1.52 prints once its first
// connection is set up: the TLS protocol, cipher and key exchange (over
// TLS), and the application protocol.
func WriteH2loadHead(w io.Writer, r *LoadResult) error {
	var b strings.Builder
	if t := r.TLS; t != nil {
		fmt.Fprintf(&b, "TLS Protocol: %s\nCipher: %s\n", t.Version, t.OpenSSLCipher())
		if k := t.TempKey(); k != "" {
			fmt.Fprintf(&b, "Server Temp Key: %s\n", k)
		}
	}
	proto := r.Protocol
	if proto == "HTTP/1.1" || proto == "HTTP/1.0" {
		proto = "http/1.1"
	}
	fmt.Fprintf(&b, "Application protocol: %s\n", proto)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteH2load writes the summary of h2load 1.52 (from "finished in" on),
// with its labels, units and widths, from a LoadResult:
//
//   - requests: total, started and done are the requests of the window
//     that ended (with a response or without); succeeded those with a 2xx
//     or 3xx status; failed the others; errored those that ended without
//     a response (connect, read, write, TLS, reset, timeout); timeout the
//     timeouts.
//   - traffic: the bytes of the responses' frames (h2load adds the
//     connection's own, SETTINGS, WINDOW_UPDATE, a few hundred bytes),
//     of their header frames, and of their bodies; h2load's space savings
//     need decoded headers, which edgebench does not decode (it prints -).
//   - time for request is the latency of each request; time for connect
//     each new connection's set-up (TCP and TLS); time to 1st byte each
//     request's, from its request written; req/s each event loop's rate,
//     where h2load gives each client's.
func WriteH2load(w io.Writer, r *LoadResult) error {
	var b strings.Builder
	e := r.Errors
	errored := e.Connect + e.Read + e.Write + e.TLS + e.Reset + e.Timeout + e.Limit
	done := r.Completed + errored
	secs := r.Duration.Seconds()
	rps, bps := 0.0, 0.0
	if secs > 0 {
		rps, bps = float64(r.OK)/secs, float64(r.Bytes)/secs
	}
	fmt.Fprintf(&b, "\nfinished in %s, %.2f req/s, %sB/s\n", h2Duration(r.Duration), rps, h2Unit(bps))
	fmt.Fprintf(&b, "requests: %d total, %d started, %d done, %d succeeded, %d failed, %d errored, %d timeout\n",
		done, done, done, r.OK, done-r.OK, errored, e.Timeout)
	var classes [6]int64
	for code, n := range r.StatusCodes {
		if code/100 >= 2 && code/100 <= 5 {
			classes[code/100] += n
		}
	}
	fmt.Fprintf(&b, "status codes: %d 2xx, %d 3xx, %d 4xx, %d 5xx\n", classes[2], classes[3], classes[4], classes[5])
	var head int64
	if r.H2 != nil {
		head = r.H2.HeaderBytes
	}
	fmt.Fprintf(&b, "traffic: %sB (%d) total, %sB (%d) headers (space savings -), %sB (%d) data\n",
		h2Unit(float64(r.Bytes)), r.Bytes, h2Unit(float64(head)), head, h2Unit(float64(r.BodyBytes)), r.BodyBytes)
	b.WriteString("                     min         max         mean         sd        +/- sd\n")
	row := func(label string, h *Histogram) {
		if h == nil || h.Count() == 0 {
			// h2load prints 0us, figures no request backs.
			fmt.Fprintf(&b, "%s %10s  %10s  %10s  %10s%10s\n", label, "-", "-", "-", "-", "-")
			return
		}
		us := func(v float64) string { return h2Duration(time.Duration(v * 1000)) }
		fmt.Fprintf(&b, "%s %10s  %10s  %10s  %10s%9s%%\n", label, us(float64(h.Min())), us(float64(h.Max())),
			us(h.Mean()), us(h.StdDev()), h2Fixed(withinStdev(h)))
	}
	row("time for request:", r.Latency)
	row("time for connect:", nonZero(r.Connect))
	row("time to 1st byte:", r.Waiting)
	var rates []float64
	for _, slots := range r.ThreadRates {
		var n int64
		for _, c := range slots {
			n += int64(c)
		}
		if secs > 0 {
			rates = append(rates, float64(n)/secs)
		}
	}
	mean, sd, mx, within := sampleStats(rates)
	mn := mx
	for _, x := range rates {
		mn = math.Min(mn, x)
	}
	fmt.Fprintf(&b, "req/s           : %10.2f  %10.2f  %10.2f  %10.2f%9s%%\n", mn, mx, mean, sd, h2Fixed(within))
	_, err := io.WriteString(w, b.String())
	return err
}

// nonZero is a copy of h without its zeros: the connect times of the
// requests that opened a connection.
func nonZero(h *Histogram) *Histogram {
	if h == nil {
		return nil
	}
	c := NewHistogram(h.max, h.digits)
	for i, n := range h.counts {
		if n == 0 || h.valueAt(i) == 0 {
			continue
		}
		if c.total == 0 {
			c.min = max(h.min, h.valueAt(i))
		}
		c.counts[i] = n
		c.total += n
	}
	c.maxSeen, c.clamped = h.maxSeen, h.clamped
	return c
}

// h2Fixed is nghttp2's dtos: two decimals.
func h2Fixed(v float64) string { return fmt.Sprintf("%.2f", v) }

// h2Duration is nghttp2's format_duration: whole microseconds below a
// millisecond, else milliseconds or seconds with two decimals.
func h2Duration(d time.Duration) string {
	us := d.Microseconds()
	switch {
	case us >= 1e6:
		return h2Fixed(float64(us)/1e6) + "s"
	case us >= 1e3:
		return h2Fixed(float64(us)/1e3) + "ms"
	}
	return fmt.Sprintf("%dus", us)
}

// h2Unit is nghttp2's utos_funit: 1024-based K, M, G with two decimals.
func h2Unit(v float64) string {
	switch {
	case v >= 1<<30:
		return h2Fixed(v/(1<<30)) + "G"
	case v >= 1<<20:
		return h2Fixed(v/(1<<20)) + "M"
	case v >= 1<<10:
		return h2Fixed(v/(1<<10)) + "K"
	}
	return fmt.Sprintf("%d", int64(v))
}
