package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"time"
)

// ABOptions are the flags of ab that change its report.
type ABOptions struct {
	NoConfidence   bool // -S: min, avg and max only, without the warnings
	NoPercentiles  bool // -d: no table of percentiles
	VariableLength bool // -l: "Document Length: Variable"
}

// abPercentiles are the rows of ab's table of percentiles.
var abPercentiles = []int{50, 66, 75, 80, 90, 95, 98, 99, 100}

// WriteAB writes the report of ApacheBench 2.3 (from "Server Software" on)
// line for line: the same labels, widths, units and decimals, and each
// optional line only when ab prints it ("Write errors" when there were
// any, "Keep-Alive requests" with keep-alive, "Total body sent" with a
// body).
// Every figure is over the measured window.
func WriteAB(w io.Writer, r *LoadResult, o ABOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Server Software:        %s\n", r.Server)
	fmt.Fprintf(&b, "Server Hostname:        %s\n", r.Target.Host)
	fmt.Fprintf(&b, "Server Port:            %d\n", r.Target.Port)
	if t := r.TLS; t != nil {
		// ab's lines: the version, cipher (OpenSSL's name), the server
		// key's and the cipher's bits; the key exchange; the name sent
		// in SNI (none for an address).
		fmt.Fprintf(&b, "SSL/TLS Protocol:       %s,%s,%d,%d\n", t.Version, t.OpenSSLCipher(), t.KeyBits, t.CipherBits())
		if k := t.TempKey(); k != "" {
			fmt.Fprintf(&b, "Server Temp Key:        %s\n", k)
		}
		if t.ServerName != "" && net.ParseIP(t.ServerName) == nil {
			fmt.Fprintf(&b, "TLS Server Name:        %s\n", t.ServerName)
		}
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "Document Path:          %s\n", r.Target.Path)
	if o.VariableLength {
		b.WriteString("Document Length:        Variable\n\n")
	} else {
		fmt.Fprintf(&b, "Document Length:        %d bytes\n\n", max(r.DocLength, 0))
	}
	secs := r.Duration.Seconds()
	done := r.Completed
	e := r.Errors
	fmt.Fprintf(&b, "Concurrency Level:      %d\n", r.Connections)
	fmt.Fprintf(&b, "Time taken for tests:   %.3f seconds\n", secs)
	fmt.Fprintf(&b, "Complete requests:      %d\n", done)
	// ab's failures: connect (a failed TLS handshake too), receive,
	// length and exceptions (its poll errors; here the timeouts). Write
	// errors and statuses are apart.
	failed := e.Connect + e.TLS + e.Read + e.Reset + e.Limit + e.Length + e.Timeout
	fmt.Fprintf(&b, "Failed requests:        %d\n", failed)
	if failed > 0 {
		fmt.Fprintf(&b, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n", e.Connect+e.TLS, e.Read+e.Reset+e.Limit, e.Length, e.Timeout)
	}
	if e.Write > 0 {
		fmt.Fprintf(&b, "Write errors:           %d\n", e.Write)
	}
	if n := non2xx(r.StatusCodes); n > 0 {
		fmt.Fprintf(&b, "Non-2xx responses:      %d\n", n)
	}
	if r.KeepAlive {
		fmt.Fprintf(&b, "Keep-Alive requests:    %d\n", r.KeepAliveResponses)
	}
	fmt.Fprintf(&b, "Total transferred:      %d bytes\n", r.Bytes)
	body := r.RequestBody > 0
	if body {
		fmt.Fprintf(&b, "Total body sent:        %d\n", r.Sent)
	}
	fmt.Fprintf(&b, "HTML transferred:       %d bytes\n", r.BodyBytes)
	if secs > 0 && done > 0 {
		fmt.Fprintf(&b, "Requests per second:    %.2f [#/sec] (mean)\n", float64(done)/secs)
		fmt.Fprintf(&b, "Time per request:       %.3f [ms] (mean)\n", float64(r.Connections)*secs*1000/float64(done))
		fmt.Fprintf(&b, "Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", secs*1000/float64(done))
		fmt.Fprintf(&b, "Transfer rate:          %.2f [Kbytes/sec] received\n", float64(r.Bytes)/1024/secs)
		if body {
			fmt.Fprintf(&b, "                        %.2f kb/s sent\n", float64(r.Sent)/1024/secs)
			fmt.Fprintf(&b, "                        %.2f kb/s total\n", float64(r.Bytes+r.Sent)/1024/secs)
		}
	}
	if done > 0 && r.Latency.Count() > 0 {
		writeABTimes(&b, r, o)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// non2xx counts the responses whose status is not 2xx, as ab does (a 3xx
// is one).
func non2xx(codes map[int]int64) int64 {
	var n int64
	for c, k := range codes {
		if c < 200 || c > 299 {
			n += k
		}
	}
	return n
}

// writeABTimes writes ab's "Connection Times (ms)" and percentiles.
func writeABTimes(b *strings.Builder, r *LoadResult, o ABOptions) {
	rows := []struct {
		label, what string
		h           *Histogram
	}{
		{"Connect:    ", "the initial connection time", r.Connect},
		{"Processing: ", "the processing time", r.Processing},
		{"Waiting:    ", "the waiting time", r.Waiting},
		{"Total:      ", "the total time", r.Latency},
	}
	b.WriteString("\nConnection Times (ms)\n")
	if o.NoConfidence {
		b.WriteString("              min   avg   max\n")
		for _, row := range rows {
			fmt.Fprintf(b, "%s%5d %5d%5d\n", row.label, roundMS(row.h.Min()), roundMS(int64(row.h.Mean())), roundMS(row.h.Max()))
		}
	} else {
		b.WriteString("              min  mean[+/-sd] median   max\n")
		for _, row := range rows {
			h := row.h
			fmt.Fprintf(b, "%s%5d %4d %5.1f %6d %7d\n", row.label, roundMS(h.Min()), roundMS(int64(h.Mean())),
				h.StdDev()/1000, roundMS(h.Quantile(.5)), roundMS(h.Max()))
		}
		// ab's sanity check of each row, on the rounded figures.
		for _, row := range rows {
			h := row.h
			d := math.Abs(float64(roundMS(int64(h.Mean())) - roundMS(h.Quantile(.5))))
			sd := h.StdDev() / 1000
			switch {
			case d > 2*sd:
				fmt.Fprintf(b, "ERROR: The median and mean for %s are more than twice the standard\n"+
					"       deviation apart. These results are NOT reliable.\n", row.what)
			case d > sd:
				fmt.Fprintf(b, "WARNING: The median and mean for %s are not within a normal deviation\n"+
					"        These results are probably not that reliable.\n", row.what)
			}
		}
	}
	if o.NoPercentiles || r.Completed < 2 {
		return
	}
	b.WriteString("\nPercentage of the requests served within a certain time (ms)\n")
	for _, p := range abPercentiles {
		v := roundMS(r.Latency.Quantile(float64(p) / 100))
		if p == 100 {
			fmt.Fprintf(b, " 100%%  %5d (longest request)\n", v)
		} else {
			fmt.Fprintf(b, "  %d%%  %5d\n", p, v)
		}
	}
}

// roundMS rounds microseconds to whole milliseconds, as ab does.
func roundMS(us int64) int64 { return (us + 500) / 1000 }

// byTotal returns r's timings sorted by total time, as ab sorts them for
// its percentiles and files.
func byTotal(r *LoadResult) []Timing {
	ts := slices.Clone(r.Timings)
	slices.SortStableFunc(ts, func(a, b Timing) int { return cmp.Compare(a.Total, b.Total) })
	return ts
}

// WriteABCSV writes ab's -e file: for each percentage from 0 to 100, the
// time in milliseconds (with decimals) within which that share of the
// requests was served. It needs the LoadResult's Timings (Config.Timings).
// Like ab, it writes nothing when no request completed.
func WriteABCSV(w io.Writer, r *LoadResult) error {
	ts := byTotal(r)
	if len(ts) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Percentage served,Time in ms\n")
	n := len(ts)
	for i := 0; i <= 100; i++ {
		var t int64
		switch i {
		case 0:
			t = ts[0].Total
		case 100:
			t = ts[n-1].Total
		default:
			t = ts[min(int(0.5+float64(n)*float64(i)/100), n-1)].Total
		}
		fmt.Fprintf(&b, "%d,%.3f\n", i, float64(t)/1000)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteABGnuplot writes ab's -g file: a header line, then one
// tab-separated line per request, by increasing total time: its start as
// ctime(3) in the local time zone and in Unix seconds, then its connect,
// processing, total and waiting times in whole milliseconds. It needs the
// LoadResult's Timings (Config.Timings).
func WriteABGnuplot(w io.Writer, r *LoadResult) error {
	ts := byTotal(r)
	if len(ts) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("starttime\tseconds\tctime\tdtime\tttime\twait\n")
	for _, t := range ts {
		start := time.UnixMicro(t.Start)
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%d\n", start.Format("Mon Jan 02 15:04:05 2006"), start.Unix(),
			roundMS(t.Connect), roundMS(t.Total-t.Connect), roundMS(t.Total), roundMS(t.Wait))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
