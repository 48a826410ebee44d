package collector

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/collector/web"
	"github.com/edgebench/edgebench/internal/testenv"
)

// route is one route of the web port, with values for its wildcards.
type route struct{ method, path string }

// webRoutes are every route of the web port; TestEveryRouteHasItsHeaders
// checks that the sources register none that is not here.
func webRoutes(resultID string) []route {
	return []route{
		{"GET", "/"}, {"GET", "/runs/" + resultID}, {"GET", "/compare?by=device"}, {"POST", "/commands/01JB6Z3H00A1B2C3D4E5F6G7H8/cancel"},
		{"GET", "/static/chart.js"}, {"GET", "/static/schedules.js"}, {"GET", "/nowhere"},
		{"POST", "/api/trigger"}, {"GET", "/api/commands/01JB6Z3H00A1B2C3D4E5F6G7H8"}, {"GET", "/api/compare?by=device"},
		{"POST", "/api/commands/01JB6Z3H00A1B2C3D4E5F6G7H8/cancel"}, {"GET", "/api/devices"},
		{"GET", "/api/schedules"}, {"POST", "/api/schedules"}, {"POST", "/api/schedules/nightly/pause"},
		{"POST", "/api/schedules/nightly/resume"}, {"GET", "/api/schedules/nightly/runs"}, {"GET", "/schedules"},
		{"GET", "/metrics"}, {"GET", "/changes"}, {"GET", "/api/changes"}, {"DELETE", "/api/schedules/nightly"},
		{"GET", "/api/runs"}, {"GET", "/runs"}, {"GET", "/trigger"}, {"GET", "/static/trigger.js"},
	}
}

// registered lists the route patterns the collector's sources register
// (the text of each Handle and HandleFunc's pattern up to its first
// quote: "POST /api/schedules/{name}/"+act is its prefix).
func registered(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`\.Handle(?:Func)?\("([^"]*)"`)
	var out []string
	for _, glob := range []string{"*.go", "web/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// covers reports whether the route r is one the pattern p (a prefix of
// one, from registered) matches.
func covers(p string, r route) bool {
	method, path, ok := strings.Cut(p, " ")
	if !ok {
		method, path = "", p
	}
	if method != "" && method != r.method {
		return false
	}
	if path == "/" {
		return true
	}
	re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]*\\\}`).ReplaceAllString(regexp.QuoteMeta(strings.TrimSuffix(path, "{$}")), `[^/]+`))
	return re.MatchString(strings.SplitN(r.path, "?", 2)[0])
}

// TestEveryRouteHasItsHeaders walks every route of the web port (and
// checks the sources register no other): each answer, a page, the API,
// /metrics, an error, a 401, a 404 or a 421, carries the Content Security
// Policy and nosniff (on main at 588e3ea /schedules, /changes and
// /metrics had neither); no page holds a script of its own (the CSP runs
// only the collector's files) or the API token, even to a request that
// carries it.
func TestEveryRouteHasItsHeaders(t *testing.T) {
	ctx := context.Background()
	const token = "t0ken-of-the-api-1234"
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "h.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(),
		APIToken: token, MetricsToken: "scrape-t0ken"})
	defer col.Close()
	r := storetest.FakeResult(rand.New(rand.NewPCG(1, 2)), "lab", "pi-1", map[string]string{"server": "nginx"}, time.Now(), 1000, 800)
	if _, err := col.Store().Ingest(ctx, []store.Incoming{storetest.Incoming(t, r)}); err != nil {
		t.Fatal(err)
	}
	if err := col.Store().AddSchedule(ctx, storetest.Schedule("nightly"), time.Now()); err != nil {
		t.Fatal(err)
	}
	routes := webRoutes(r.ID)
	for _, p := range registered(t) {
		if !slices.ContainsFunc(routes, func(r route) bool { return covers(p, r) }) {
			t.Errorf("route %q is registered but not walked: add it to webRoutes", p)
		}
	}
	base := "http://" + col.WebAddr()
	scriptRe := regexp.MustCompile(`(?i)<script(\s[^>]*)?>`)
	for _, rt := range routes {
		for _, auth := range []string{"", "Bearer " + token} {
			for _, host := range []string{"", "evil.example"} {
				req, err := http.NewRequest(rt.method, base+rt.path, strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				if host != "" {
					req.Host = host
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				what := fmt.Sprintf("%s %s (token %v, host %q): %s", rt.method, rt.path, auth != "", host, resp.Status)
				if got := resp.Header.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
					t.Errorf("%s: Content-Security-Policy %q", what, got)
				}
				if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("%s: X-Content-Type-Options %q", what, got)
				}
				if bytes.Contains(body, []byte(token)) {
					t.Errorf("%s: the API token is in the answer", what)
				}
				for _, m := range scriptRe.FindAllStringSubmatch(string(body), -1) {
					if !strings.Contains(m[1], `src="/static/`) {
						t.Errorf("%s: a script of its own: %s", what, m[0])
					}
				}
				if regexp.MustCompile(`(?i)\son[a-z]+\s*=`).Match(body) && strings.Contains(resp.Header.Get("Content-Type"), "html") {
					t.Errorf("%s: an inline event handler", what)
				}
			}
		}
	}
}

// TestExpensivePagesGuarded: with an API token, the pages and routes
// whose work grows with the history want it (a browser's Basic password
// on pages, never on the API), /metrics wants its own token or the
// API's; and with a PostgreSQL whose results table is locked, two such
// requests hold the two places, a third and a fourth are answered 503
// with Retry-After at once, while the other routes and /metrics' own
// places still answer; once the lock goes, the two held ones finish.
func TestExpensivePagesGuarded(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.PostgresDB(t)
	col := startCollector(t, Config{DB: dsn, Listen: testenv.FreeAddr(t), Accounts: testAccounts(), APIToken: "s3cret",
		MetricsToken: "scr4pe", WebMaxExpensive: 2})
	defer col.Close()
	base := "http://" + col.WebAddr()
	get := func(path, auth string, basic bool) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		switch {
		case basic:
			req.SetBasicAuth("me", auth)
		case auth != "":
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	for _, c := range []struct {
		path, auth string
		basic      bool
		want       int
	}{
		{"/changes", "", false, 401}, {"/changes", "s3cret", false, 200}, {"/changes", "s3cret", true, 200},
		{"/compare?by=device", "", false, 401}, {"/compare?by=device", "s3cret", true, 200},
		{"/api/changes", "s3cret", true, 401}, {"/api/changes", "s3cret", false, 200},
		{"/api/compare?by=device", "", false, 401}, {"/api/compare?by=device", "s3cret", false, 200},
		{"/metrics", "", false, 401}, {"/metrics", "scr4pe", true, 401}, {"/metrics", "scr4pe", false, 200}, {"/metrics", "s3cret", false, 200},
		{"/", "", false, 200}, {"/schedules", "", false, 200},
	} {
		if resp, b := get(c.path, c.auth, c.basic); resp.StatusCode != c.want {
			t.Errorf("%s (token %q, basic %v): %s, want %d: %s", c.path, c.auth, c.basic, resp.Status, c.want, b)
		}
	}

	// Lock the tables they read: the expensive routes wait in the store.
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "LOCK TABLE results, changes IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	held := make([]int, 2)
	for i, p := range []string{"/api/changes?days=365", "/changes?days=365"} {
		wg.Go(func() {
			resp, _ := get(p, "s3cret", false)
			held[i] = resp.StatusCode
		})
	}
	testenv.Until(t, "both requests waiting for the lock", func() bool {
		var n int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND application_name = 'edgebench-collector' AND wait_event_type = 'Lock'`).Scan(&n)
		return err == nil && n == 2
	})
	for _, p := range []string{"/compare?by=device", "/api/compare?by=device", "/api/schedules/x/runs"} {
		resp, b := get(p, "s3cret", false)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "2" || !strings.Contains(b, "busy: 2 requests for expensive pages") {
			t.Errorf("%s while two are held: %s, Retry-After %q: %s", p, resp.Status, resp.Header.Get("Retry-After"), b)
		}
	}
	if resp, b := get("/api/schedules", "s3cret", false); resp.StatusCode != 200 {
		t.Errorf("a cheap route while the pages are full: %s %s", resp.Status, b)
	}
	if resp, b := get("/metrics", "scr4pe", false); resp.StatusCode != 200 {
		t.Errorf("a scrape while the pages are full: %s %s", resp.Status, b)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if held[0] != 200 || held[1] != 200 {
		t.Errorf("the held requests ended %v, want 200 each", held)
	}
	if resp, _ := get("/api/compare?by=device", "s3cret", false); resp.StatusCode != 200 {
		t.Errorf("after the lock: %s", resp.Status)
	}
}

// TestPrometheusScrapesWithItsToken: a real Prometheus whose scrape
// config gives the metrics token in a credentials_file scrapes /metrics;
// a job without it is refused (its up is 0).
func TestPrometheusScrapesWithItsToken(t *testing.T) {
	prom := testenv.Tool(t, "prometheus")
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "m.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(),
		APIToken: "s3cret", MetricsToken: "scr4pe-t0ken"})
	defer col.Close()
	dir := t.TempDir()
	cred := filepath.Join(dir, "edgebench.token")
	os.WriteFile(cred, []byte("scr4pe-t0ken\n"), 0o600)
	web := testenv.FreeAddr(t)
	conf := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(conf, []byte(fmt.Sprintf(`global: {scrape_interval: 1s}
scrape_configs:
  - job_name: edgebench
    authorization: {credentials_file: %s}
    static_configs: [{targets: ['%s']}]
  - job_name: stranger
    static_configs: [{targets: ['%[2]s']}]
`, cred, col.WebAddr())), 0o644)
	var log bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	query := func(q string) map[string]string {
		var got struct {
			Data struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  []any             `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + q)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&got)
		out := map[string]string{}
		for _, r := range got.Data.Result {
			out[r.Metric["job"]] = fmt.Sprint(r.Value[1])
		}
		return out
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		up := query("up")
		if up["edgebench"] == "1" && up["stranger"] == "0" && query("edgebench_store_up")["edgebench"] == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, up is %v:\n%s", up, log.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}
