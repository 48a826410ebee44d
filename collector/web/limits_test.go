package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestTokensOfPagesAndMetrics: a page takes the API's token as a bearer
// or as Basic's password, whatever the user name; /metrics takes its own
// token or the API's, as a bearer only; a wrong one, another scheme, a
// token's prefix or none are 401, with the challenge a browser or
// Prometheus understands; without tokens everything passes.
func TestTokensOfPagesAndMetrics(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	basic := func(user, pw string) string {
		r := httptest.NewRequest("GET", "/", nil)
		r.SetBasicAuth(user, pw)
		return r.Header.Get("Authorization")
	}
	page, metrics := RequirePageToken("s3cret", ok), RequireMetricsToken("scr4pe", "s3cret", ok)
	for _, c := range []struct {
		name      string
		h         http.Handler
		auth      string
		want      int
		challenge string
	}{
		{"page, bearer", page, "Bearer s3cret", 200, ""},
		{"page, basic", page, basic("anyone", "s3cret"), 200, ""},
		{"page, basic without a user", page, basic("", "s3cret"), 200, ""},
		{"page, none", page, "", 401, "Basic"},
		{"page, wrong", page, "Bearer s3cres", 401, "Basic"},
		{"page, a prefix", page, "Bearer s3cre", 401, "Basic"},
		{"page, basic, the token as user", page, basic("s3cret", ""), 401, "Basic"},
		{"page, the metrics token", page, "Bearer scr4pe", 401, "Basic"},
		{"metrics, its token", metrics, "Bearer scr4pe", 200, ""},
		{"metrics, the API's", metrics, "Bearer s3cret", 200, ""},
		{"metrics, basic", metrics, basic("prometheus", "scr4pe"), 401, "Bearer"},
		{"metrics, none", metrics, "", 401, "Bearer"},
		{"metrics, lower-case scheme", metrics, "bearer scr4pe", 401, "Bearer"},
		{"page without a token", RequirePageToken("", ok), "", 200, ""},
		{"metrics without tokens", RequireMetricsToken("", "", ok), "", 200, ""},
		{"metrics, the API's only", RequireMetricsToken("", "s3cret", ok), "Bearer s3cret", 200, ""},
		{"metrics, the API's only, none", RequireMetricsToken("", "s3cret", ok), "", 401, "Bearer"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/changes", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		c.h.ServeHTTP(rec, req)
		if rec.Code != c.want || !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), c.challenge) {
			t.Errorf("%s: %d %q, want %d %s", c.name, rec.Code, rec.Header().Get("WWW-Authenticate"), c.want, c.challenge)
		}
	}
}

// TestLimiter, over real sockets: with two places, two requests held in
// the handler and the third answered at once 503 with Retry-After; once
// one ends, the next gets its place.
func TestLimiter(t *testing.T) {
	release := make(chan struct{})
	in := make(chan struct{}, 8)
	l := NewLimiter("expensive pages", 2)
	srv := httptest.NewServer(l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in <- struct{}{}
		<-release
	})))
	defer srv.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			resp, err := http.Get(srv.URL)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("a request in its place: %v %v", resp, err)
			}
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	<-in
	<-in
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "2" || !strings.Contains(string(b), "2 requests for expensive pages") {
		t.Errorf("the third: %s, Retry-After %q: %s", resp.Status, resp.Header.Get("Retry-After"), b)
	}
	release <- struct{}{}
	go func() {
		resp, err := http.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-in // the next one has the place the first left
	close(release)
	wg.Wait()
}
