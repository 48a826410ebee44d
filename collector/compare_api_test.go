package collector

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestCompareQueryLimits: a comparison asked over HTTP is checked before
// any work: a list of 5,000 metrics, a repeated or unknown parameter, an
// overlong value are each one clear 400.
func TestCompareQueryLimits(t *testing.T) {
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "q.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts()})
	defer col.Close()
	storetest.SeedCompare(t, col.store)
	base := "http://" + col.WebAddr() + "/api/compare?"
	for _, tc := range []struct {
		query string
		code  int
		want  string
	}{
		{"by=server&metric=rps,p99", 200, "vs nginx"},
		{"by=server&metric=" + strings.Repeat("rps,", 4999) + "rps", 400, "metric is 19999 bytes long"},
		{"by=server&metric=" + strings.Repeat("rps,", 30) + "rps", 400, "31 metrics"},
		{"by=server&metric=rps,p50,rps", 400, `metric "rps" given twice`},
		{"by=server&by=device", 400, "by given 2 times"},
		{"by=" + strings.Repeat("x", 300), 400, "by is 300 bytes long"},
		{"by=server&labels=a", 400, `unknown parameter "labels"`},
		{"by=sevrer", 400, `no run has "sevrer"`},
	} {
		resp, err := http.Get(base + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%.60s: %d %q, want %d %q", tc.query, resp.StatusCode, body, tc.code, tc.want)
		}
	}
}
