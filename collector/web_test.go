package collector

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newTestWeb(t *testing.T) (*httptest.Server, *Store) {
	t.Helper()
	s := openTestStore(t)
	seedCompare(t, s)
	w, err := NewWeb(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return srv, s
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestWebPages(t *testing.T) {
	srv, s := newTestWeb(t)
	runs, err := s.Runs(context.Background(), Filter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		code int
		want []string
	}{
		{"/", 200, []string{"pi-1", "pi-2", "/runs/" + runs[0].ID}},
		{"/runs/" + runs[0].ID, 200, []string{"data-chart=", "Requests per second", "Temperature", "req/s", "nginx/1.22.1"}},
		{"/runs/last", 200, []string{"Latency"}},
		{"/runs/01", 400, nil},
		{"/runs/nope", 404, nil},
		{"/compare?by=server&metric=p99", 200, []string{"kangle", "vs nginx", "data-chart="}},
		{"/compare?by=server&metric=bogus", 200, []string{"unknown metric"}},
		{"/static/chart.js", 200, []string{"createElementNS"}},
		{"/nothing", 404, nil},
	} {
		code, body := get(t, srv.URL+tc.path)
		if code != tc.code {
			t.Errorf("%s: status %d, want %d", tc.path, code, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q", tc.path, w)
			}
		}
	}
}

// TestWebChartsInChromium loads the run and comparison pages in headless
// Chromium and checks, in the DOM after the script ran, that the charts
// were drawn as SVG with their data points.
func TestWebChartsInChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: CI must install it (apt-get install chromium)")
		}
		t.Skip("SKIPPED: chromium is not installed (apt-get install chromium)")
	}
	srv, s := newTestWeb(t)
	runs, err := s.Runs(context.Background(), Filter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	dump := func(path string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
			"--user-data-dir="+t.TempDir(), "--dump-dom", srv.URL+path)
		cmd.WaitDelay = 5 * time.Second
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %s: %v\n%s", path, err, stderr.String())
		}
		return string(out)
	}
	rendered := regexp.MustCompile(`data-rendered="(\d+)"`)

	dom := dump("/runs/" + runs[0].ID)
	charts := rendered.FindAllStringSubmatch(dom, -1)
	if len(charts) != 5 {
		t.Fatalf("run page: %d charts rendered, want 5\n%.2000s", len(charts), dom)
	}
	for i, m := range charts {
		if n, _ := strconv.Atoi(m[1]); n < 10 {
			t.Errorf("run chart %d drew %d points", i, n)
		}
	}
	if n := strings.Count(dom, `class="pt"`); n < 50 {
		t.Errorf("run page: %d data points in the DOM", n)
	}
	if !strings.Contains(dom, `class="chart-svg"`) || !regexp.MustCompile(`<path d="M[\d.]+ [\d.]+L`).MatchString(dom) {
		t.Error("run page: no drawn SVG line")
	}

	dom = dump("/compare?by=server&metric=rps")
	if n := strings.Count(dom, `class="bar"`); n != 2 {
		t.Errorf("compare page: %d bars, want 2\n%.2000s", n, dom)
	}
	if n := strings.Count(dom, `class="err"`); n != 2 {
		t.Errorf("compare page: %d error bars, want 2", n)
	}
	if !regexp.MustCompile(`>\+\d+\.\d\d%</text>`).MatchString(dom) {
		t.Error("compare page: no significant verdict on the kangle bar")
	}
}
