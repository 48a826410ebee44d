package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/golden"
)

// goldenResult is a fixed LoadResult with a bit of everything: failures of
// each class, two status codes, a drain and a warm-up.
func goldenResult() *LoadResult {
	t, _ := ParseTarget("http://127.0.0.1:8080/index.html")
	r := &LoadResult{
		Target: t, Method: "GET", Connections: 4, Threads: 2, KeepAlive: true, Timeout: 2 * time.Second,
		Warmup: time.Second, Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Duration: 3 * time.Second,
		Completed: 1200, OK: 1190, StatusCodes: map[int]int64{200: 1190, 404: 10},
		Errors: Errors{Connect: 1, Read: 2, Write: 0, Timeout: 3, Status: 10},
		Bytes:  1200 * 2400, BodyBytes: 1200 * 2159, Connects: 5, DocLength: 2159, Server: "nginx/1.22.1",
		Latency: NewLatencyHistogram(), Connect: NewLatencyHistogram(), Waiting: NewLatencyHistogram(), Processing: NewLatencyHistogram(),
		Timeline: []Second{{T: 0, Completed: 390, Errors: 5, P50: 9000, P99: 31000}, {T: 1, Completed: 410, Errors: 6, P50: 9500, P99: 30000},
			{T: 2, Completed: 400, Errors: 5, P50: 9200, P99: 29000}},
		Drained: Drained{Requests: 4, Completed: 3, OK: 3, Errors: Errors{Timeout: 1}, StatusCodes: map[int]int64{200: 3},
			Bytes: 3 * 2400, BodyBytes: 3 * 2159},
		WarmupRequests: 380, KeepAliveResponses: 1198, Sent: 1206 * 80,
	}
	for i := range int64(1200) {
		lat := 5000 + (i*7919)%20000 // 5 to 25 ms, spread
		if i%400 == 7 {
			lat = 61000 // held-back requests, which wrk's correction adds to
		}
		var conn int64
		if i < 5 {
			conn = 150 + 10*i
		}
		r.Latency.Record(lat)
		r.Waiting.Record(lat - 300)
		r.Connect.Record(conn)
		r.Processing.Record(lat - conn)
		r.Timings = append(r.Timings, Timing{Start: r.Start.UnixMicro() + i*2500, Connect: conn, Wait: lat - 300, Total: lat})
	}
	// Two threads' completions per 100 ms: steady, then one with gaps.
	for th := range 2 {
		slots := make([]uint32, 30)
		for i := range slots {
			slots[i] = uint32(18 + (i*7+th*3)%5)
			if th == 1 && i%10 == 3 {
				slots[i] = 0
			}
		}
		r.ThreadRates = append(r.ThreadRates, slots)
	}
	return r
}

// abResult is ab's run without keep-alive, with the length check and a
// request body: the lines of ab that goldenResult leaves out.
func abResult() *LoadResult {
	r := goldenResult()
	r.KeepAlive, r.LengthCheck, r.RequestBody = false, true, 64
	r.Errors = Errors{Write: 2, Length: 4}
	r.StatusCodes = map[int]int64{200: 1190, 302: 10}
	return r
}

// tlsResult is goldenResult over HTTPS without keep-alive: TLS 1.2 with
// resumption, a failed handshake.
func tlsResult() *LoadResult {
	r := goldenResult()
	r.Target, _ = ParseTarget("https://localhost:8443/index.html")
	r.KeepAlive, r.Protocol = false, "HTTP/1.1"
	r.Errors.TLS = 2
	r.TLS = &TLSInfo{Version: "TLSv1.2", Cipher: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", Group: "X25519",
		ServerName: "localhost", KeyBits: 256, Resume: true, Handshakes: 5, Resumed: 4}
	r.Handshake = NewLatencyHistogram()
	for i := range int64(5) {
		r.Handshake.Record(100 + 5*i)
	}
	return r
}

// h2Result is goldenResult over HTTP/2 with TLS 1.3: streams reset, a
// GOAWAY.
func h2Result() *LoadResult {
	r := tlsResult()
	r.KeepAlive, r.Protocol = true, "h2"
	r.Errors.TLS, r.Errors.Reset = 0, 3
	r.TLS.Version, r.TLS.Cipher, r.TLS.ALPN, r.TLS.Resumed = "TLSv1.3", "TLS_AES_128_GCM_SHA256", "h2", 0
	r.H2 = &H2Info{Streams: 10, MaxStreams: 128, GoAways: 1, Retried: 6, HeaderBytes: 1200 * 100, Resets: map[string]int64{"REFUSED_STREAM": 2, "CANCEL": 1}}
	return r
}

// flowingResult is issue 28's download still flowing when the window
// closed (nginx's limit_rate at 20 MB/s, wrk -t1 -c1 -d4s): no response
// completed, 80 MB read in the window, the rest in the drain, where it
// was cut.
func flowingResult() *LoadResult {
	t, _ := ParseTarget("http://127.0.0.1:8080/big.iso")
	return &LoadResult{
		Target: t, Method: "GET", Connections: 1, Threads: 1, KeepAlive: true, Timeout: 2 * time.Second, WholeRequestTimeout: true,
		Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Duration: 4 * time.Second,
		StatusCodes: map[int]int64{}, Bytes: 80 << 20, BodyBytes: 80<<20 - 250, Connects: 0, DocLength: -1, Server: "nginx/1.22.1",
		Latency: NewLatencyHistogram(), Connect: NewLatencyHistogram(), Waiting: NewLatencyHistogram(), Processing: NewLatencyHistogram(),
		Drained:     Drained{Requests: 1, Cut: 1, StatusCodes: map[int]int64{}, Bytes: 40 << 20, BodyBytes: 40 << 20},
		ThreadRates: [][]uint32{make([]uint32, 40)},
	}
}

// TestReportsGolden pins every report of a fixed LoadResult: a change to a
// report shows in the diff of testdata/*.golden (go test -run Golden
// -update rewrites them).
func TestReportsGolden(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC // ab's -g file has local times
	r := goldenResult()
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"report.txt.golden", func(b *bytes.Buffer) error { return WriteText(b, r) }},
		{"report.ab.golden", func(b *bytes.Buffer) error { return WriteAB(b, r, ABOptions{}) }},
		{"report.ab-Sd.golden", func(b *bytes.Buffer) error {
			return WriteAB(b, abResult(), ABOptions{NoConfidence: true, NoPercentiles: true, VariableLength: true})
		}},
		{"report.ab-body.golden", func(b *bytes.Buffer) error { return WriteAB(b, abResult(), ABOptions{}) }},
		{"ab-e.csv.golden", func(b *bytes.Buffer) error { return WriteABCSV(b, r) }},
		{"ab-g.tsv.golden", func(b *bytes.Buffer) error { return WriteABGnuplot(b, r) }},
		{"report.wrk.golden", func(b *bytes.Buffer) error { return WriteWrk(b, r, WrkOptions{Latency: true}) }},
		{"report.wrk-nolatency.golden", func(b *bytes.Buffer) error { return WriteWrk(b, r, WrkOptions{NoHeader: true}) }},
		{"report.json.golden", func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(r.JSON())
		}},
		{"report.https.txt.golden", func(b *bytes.Buffer) error { return WriteText(b, tlsResult()) }},
		{"report.https.ab.golden", func(b *bytes.Buffer) error { return WriteAB(b, tlsResult(), ABOptions{}) }},
		{"report.https.wrk.golden", func(b *bytes.Buffer) error { return WriteWrk(b, tlsResult(), WrkOptions{}) }},
		{"report.h2.txt.golden", func(b *bytes.Buffer) error { return WriteText(b, h2Result()) }},
		{"report.h2.h2load.golden", func(b *bytes.Buffer) error {
			if err := WriteH2loadHead(b, h2Result()); err != nil {
				return err
			}
			return WriteH2load(b, h2Result())
		}},
		{"report.flowing.txt.golden", func(b *bytes.Buffer) error { return WriteText(b, flowingResult()) }},
		{"report.flowing.wrk.golden", func(b *bytes.Buffer) error { return WriteWrk(b, flowingResult(), WrkOptions{Latency: true}) }},
		{"report.flowing.ab.golden", func(b *bytes.Buffer) error { return WriteAB(b, flowingResult(), ABOptions{}) }},
		{"report.flowing.json.golden", func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(flowingResult().JSON())
		}},
		{"report.h2.json.golden", func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(h2Result().JSON())
		}},
	} {
		var got bytes.Buffer
		if err := tc.write(&got); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, tc.file, got.Bytes())
	}
}

// TestConnectMeansTheSameInTextAndJSON: 5 connections opened for 1200
// requests; the JSON's connect_us and the text's connect line are both
// over the 5 connections, not the 1195 requests that reused one.
func TestConnectMeansTheSameInTextAndJSON(t *testing.T) {
	r := goldenResult()
	j := r.JSON().Connect
	if j.Min != 150 || j.P50 < 150 || j.P99 < 180 || j.Mean < 169 || j.Mean > 171 || j.Max < 190 {
		t.Errorf("connect_us %+v: want the 5 connections' 150 to 190 us, mean 170", j)
	}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("connect     5 opened, mean %s, p99 %s, max %s", usf(j.Mean), us(j.P99), us(j.Max))
	if !strings.Contains(b.String(), want) {
		t.Errorf("the text's connect line is not the JSON's connect_us: want %q in\n%s", want, b.String())
	}
}
