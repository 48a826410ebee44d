package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestRedirectsOnlyWarn: a run whose every answer is a redirect says so
// on stderr (its report counts them ok), in run, ab and wrk modes alike;
// a run of the page itself, as edgebench serve now answers /index.html,
// does not.
func TestRedirectsOnlyWarn(t *testing.T) {
	redirect := httptest.NewServer(http.RedirectHandler("/elsewhere", http.StatusMovedPermanently))
	defer redirect.Close()
	const want = "edgebench: warning: every answer was a redirect (status 301: "
	for _, args := range [][]string{
		{"run", "-n", "50", "-c", "2", "--no-probe", redirect.URL + "/index.html"},
		{"ab", "-n", "50", "-c", "2", "--no-system", redirect.URL + "/index.html"},
		{"wrk", "-d", "0.3", "-t", "1", "-c", "2", "--no-system", redirect.URL + "/index.html"},
	} {
		r := runBinary(t, args...)
		if r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want 0 and %q", args, r.code, r.stderr, want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(strings.Repeat("x", 612)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, "run", "-n", "50", "-c", "2", "--no-probe", testenv.Target(t, dir)+"/index.html")
	if r.code != 0 || strings.Contains(r.stderr, "redirect") || !strings.Contains(r.stdout, "status      200: 50") {
		t.Errorf("edgebench serve's /index.html: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
}
