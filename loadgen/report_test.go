package loadgen

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files of the reports")

// goldenResult is a fixed Result with a bit of everything: failures of
// each class, two status codes, a drain and a warm-up.
func goldenResult() *Result {
	t, _ := ParseTarget("http://127.0.0.1:8080/index.html")
	r := &Result{
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
		WarmupRequests: 380,
	}
	for i := range int64(1200) {
		lat := 5000 + (i*7919)%20000 // 5 to 25 ms, spread
		r.Latency.Record(lat)
		r.Waiting.Record(lat - 300)
		if i < 5 {
			r.Connect.Record(150 + 10*i)
		} else {
			r.Connect.Record(0)
		}
		r.Processing.Record(lat - 100)
	}
	return r
}

// TestReportsGolden pins every report of a fixed Result: a change to a
// report shows in the diff of testdata/*.golden (go test -run Golden
// -update rewrites them).
func TestReportsGolden(t *testing.T) {
	r := goldenResult()
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"report.txt.golden", func(b *bytes.Buffer) error { return WriteText(b, r) }},
		{"report.ab.golden", func(b *bytes.Buffer) error { return WriteAB(b, r) }},
		{"report.wrk.golden", func(b *bytes.Buffer) error { return WriteWrk(b, r) }},
		{"report.json.golden", func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(r.JSON())
		}},
	} {
		var got bytes.Buffer
		if err := tc.write(&got); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run Golden -update writes it)", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s differs (go test -run Golden -update rewrites it after a wanted change):\n--- got\n%s\n--- want\n%s", tc.file, got.Bytes(), want)
		}
	}
}
