package report

import (
	"strings"
	"testing"
	"time"
)

// TestWrkUnits pins wrk's units.c: the next unit from 85 % of the scale
// on, never the last unit of a list, and print_units' alignment.
func TestWrkUnits(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{wrkTime(359.6), "359.60us"},
		{wrkTime(849.99), "849.99us"},
		{wrkTime(850), "0.85ms"},
		{wrkTime(10980), "10.98ms"},
		{wrkTime(999_999), "1000.00ms"},
		{wrkTime(1e6), "1.00s"},
		{wrkTime(51e6), "0.85m"},
		{wrkTime(3600e6), "60.00m"},
		{wrkTimeS.format(30, 0), "30s"},
		{wrkTimeS.format(60, 0), "1m"},
		{wrkTimeS.format(90, 0), "2m"},
		{wrkTimeS.format(3600, 0), "60m"},
		{wrkMetric.format(18320, 2), "18.32k"},
		{wrkMetric.format(849, 2), "849.00"},
		{wrkBinary.format(166.46*1024*1024, 2), "166.46M"},
		{wrkBinary.format(960000, 2), "0.92M"},
		{wrkBinary.format(870, 2), "870.00"},
		{wrkBinary.format(1<<50, 2), "1024.00T"},
		{wrkCell("359.60us", 8), "359.60us"},
		{wrkCell("18.32k", 8), " 18.32k "},
		{wrkCell("95.61", 8), " 95.61  "},
		{wrkCell("3.48ms", 10), "    3.48ms"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestWrkCorrected checks the histogram form of wrk's stats_correct
// against wrk's own loop over exact values (below 2048 µs a latency
// histogram is exact).
func TestWrkCorrected(t *testing.T) {
	values := []int64{3, 40, 41, 99, 100, 150, 333, 999, 1500, 2000, 2000}
	for _, e := range []int64{1, 7, 20, 50, 400, 1000, 3000} {
		h := NewLatencyHistogram()
		data := make([]int64, 2048)
		for _, v := range values {
			h.Record(v)
			data[v]++
		}
		// wrk's stats_correct, verbatim in Go.
		for n := e * 2; n <= 2000; n++ {
			count := data[n]
			for m := n - e; count > 0 && m > e; m -= e {
				data[m] += count
			}
		}
		c := wrkCorrected(h, e)
		var total int64
		for v, n := range data {
			total += n
			if got := c.counts[c.index(int64(v))]; got != n {
				t.Fatalf("e=%d: %d at %d µs, wrk has %d", e, got, v, n)
			}
		}
		if c.Count() != total || c.Max() != 2000 || h.Count() != int64(len(values)) {
			t.Errorf("e=%d: count %d (wrk %d), max %d; the original has %d", e, c.Count(), total, c.Max(), h.Count())
		}
	}
}

// TestWrkNoLatency: every response late: the timeouts among the socket
// errors, as wrk prints them, but no latency where wrk prints 0.00us, a
// figure no request backs, and a line that says why.
func TestWrkNoLatency(t *testing.T) {
	tg, _ := ParseTarget("http://127.0.0.1:8080/delay/2500")
	r := &LoadResult{Target: tg, Connections: 2, Threads: 1, Duration: 3 * time.Second, Completed: 2, Bytes: 254,
		Errors: Errors{Timeout: 2}, Latency: NewLatencyHistogram(), ThreadRates: [][]uint32{make([]uint32, 30)}}
	r.ThreadRates[0][25] = 2 // one sample: 2 in 2.6 s, 0 req/s in whole requests as wrk
	var b strings.Builder
	if err := WriteWrk(&b, r, WrkOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `Running 3s test @ http://127.0.0.1:8080/delay/2500
  1 threads and 2 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency        -         -        -         -
    Req/Sec     0.00      0.00     0.00    100.00%
  2 requests in 3.00s, 254.00B read
  No latency: every response took the timeout or longer, which leaves it out of the latency
  Socket errors: connect 0, read 0, write 0, timeout 2
Requests/sec:      0.67
Transfer/sec:      84.67B
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
