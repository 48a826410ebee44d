package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/testenv"
)

// wrkRead is the bytes of wrk's "N requests in Xs, YMB read" line.
func wrkRead(t *testing.T, out string) float64 {
	t.Helper()
	m := regexp.MustCompile(`requests in \S+, ([0-9.]+)([KMGT]?)B read`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no bytes read in the report:\n%s", out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v * math.Pow(1024, float64(strings.Index("KMGT", m[2])+1))
}

// TestWrkCountsBytesStillArriving is issue 28's item 3 as a user typed
// it: edgebench wrk -t1 -c1 -d4s against nginx's limit_rate printed
// "0.00B read" where wrk said 80.00MB, and its verdict "mean latency
// 0us". Against wrk on the same nginx: the same bytes read, the same exit
// status, no latency figure, and a verdict that says no response
// completed; the JSON has no latency either.
func TestWrkCountsBytesStillArriving(t *testing.T) {
	wrkBin := testenv.Tool(t, "wrk")
	srv := testenv.NginxWith(t, testenv.NginxConfig{HTTPExtra: "limit_rate 4m;"})
	f, err := os.Create(filepath.Join(srv.Root, "big.iso"))
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(1 << 30)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr + "/big.iso"
	dir := t.TempDir()
	real := runTool(t, dir, wrkBin, "-t1", "-c1", "-d2s", "--latency", url)
	ours := runTool(t, dir, testenv.Binary(t, "."), "wrk", "-t1", "-c1", "-d2s", "--latency", url)
	if real.code != ours.code {
		t.Errorf("exit %d (%s), wrk's %d", ours.code, ours.stderr, real.code)
	}
	got, want := wrkRead(t, ours.stdout), wrkRead(t, real.stdout)
	if got < 0.8*want || got > 1.2*want {
		t.Errorf("edgebench wrk read %.0f bytes, wrk %.0f on the same nginx: want within 20 %%\n%s\n--- wrk\n%s", got, want, ours.stdout, real.stdout)
	}
	for _, want := range []string{"  0 requests in 2.00s", "  No latency: no response completed in the measured window", "no response completed in the measured window (2.00s): 1 request in flight at its end"} {
		if !strings.Contains(ours.stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, ours.stdout)
		}
	}
	if regexp.MustCompile(`\b0(\.00)?us\b`).MatchString(ours.stdout) {
		t.Errorf("a latency of 0us, which no request backs:\n%s", ours.stdout)
	}

	r := runBinary(t, "wrk", "-t1", "-c1", "-d1s", "--format", "json", url)
	var doc struct {
		Bytes     int64           `json:"bytes"`
		Latency   json.RawMessage `json:"latency_us"`
		NoLatency string          `json:"no_latency"`
		Verdict   struct {
			Reasons []string `json:"reasons"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if doc.Bytes < 2<<20 || string(doc.Latency) != "null" || doc.NoLatency == "" || strings.Contains(strings.Join(doc.Verdict.Reasons, " "), "0us") {
		t.Errorf("JSON: bytes %d, latency_us %s, no_latency %q, verdict %q", doc.Bytes, doc.Latency, doc.NoLatency, doc.Verdict.Reasons)
	}
}
