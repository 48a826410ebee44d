package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

func newTestWeb(t *testing.T, e storetest.Engine) (*httptest.Server, *store.Store) {
	t.Helper()
	s := e.Open(t)
	storetest.SeedCompare(t, s)
	w, err := New(s, Options{})
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
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		srv, s := newTestWeb(t, e)
		runs, err := s.Runs(context.Background(), store.Filter{Limit: 1})
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
	})
}

// chromium finds the browser, or skips (fails in CI) without it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "chromium is not installed", "apt-get install chromium")
	return ""
}

// browse loads url in headless Chromium and returns the DOM after the
// scripts ran. With EDGEBENCH_SCREENSHOTS=DIR it also saves a screenshot
// of the page as DIR/name.png, to look at.
func browse(t *testing.T, bin, url, name string) string {
	t.Helper()
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
			"--user-data-dir=" + t.TempDir()}, args...)
		cmd := exec.CommandContext(ctx, bin, append(args, url)...)
		cmd.WaitDelay = 5 * time.Second
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
		}
		return out
	}
	if dir := os.Getenv("EDGEBENCH_SCREENSHOTS"); dir != "" {
		path, err := filepath.Abs(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		run("--window-size=1280,1800", "--hide-scrollbars", "--screenshot="+path)
		t.Logf("screenshot of %s: %s", url, path)
	}
	return string(run("--dump-dom"))
}

// tick is an axis label as chart.js draws it.
var tick = regexp.MustCompile(`<text x="([\d.]+)" y="([\d.]+)"[^>]*class="tick ([xy])"[^>]*data-value="([^"]+)"[^>]*>([^<]*)</text>`)

// The plot area of chart.js: its axes run from L to W-R and from H-B up
// to T; a tick's label is drawn 4 px below a y tick and 16 px below the
// x axis.
const plotL, plotR, plotT, plotB = 56, 640 - 12, 28, 240 - 36

// checkAxes checks every axis of every chart in dom: ticks evenly spaced
// a step of 1, 2 or 5 times a power of ten apart, each on a multiple of
// the step and labelled with its exact value (12500 is "12.5k"), the
// first and the last at the ends of the axis, so that what is drawn lies
// between round values.
func checkAxes(t *testing.T, page, dom string) {
	t.Helper()
	charts := strings.Split(dom, `<div class="chart"`)[1:]
	if len(charts) == 0 {
		t.Fatalf("%s: no chart", page)
	}
	for ci, c := range charts {
		for _, axis := range []string{"x", "y"} {
			var vals, pos []float64
			var labels []string
			for _, m := range tick.FindAllStringSubmatch(c, -1) {
				if m[3] != axis {
					continue
				}
				v, err := strconv.ParseFloat(m[4], 64)
				if err != nil {
					t.Fatalf("%s chart %d: tick %q", page, ci, m[4])
				}
				p := m[1]
				if axis == "y" {
					p = m[2]
				}
				at, _ := strconv.ParseFloat(p, 64)
				vals, pos, labels = append(vals, v), append(pos, at), append(labels, m[5])
			}
			if axis == "x" && len(vals) == 0 && strings.Contains(c, `class="bar"`) {
				continue // bars have labels, not ticks, below
			}
			if len(vals) < 2 {
				t.Errorf("%s chart %d: %d %s ticks", page, ci, len(vals), axis)
				continue
			}
			ends := [2]float64{plotL, plotR}
			if axis == "y" {
				ends = [2]float64{plotB + 4, plotT + 4}
			}
			if math.Abs(pos[0]-ends[0]) > 0.5 || math.Abs(pos[len(pos)-1]-ends[1]) > 0.5 {
				t.Errorf("%s chart %d: the %s axis does not begin and end on a tick: ticks %v at %v", page, ci, axis, vals, pos)
			}
			step := vals[1] - vals[0]
			mag := math.Pow(10, math.Floor(math.Log10(step)+1e-9))
			if r := step / mag; math.Abs(r-1) > 1e-6 && math.Abs(r-2) > 1e-6 && math.Abs(r-5) > 1e-6 {
				t.Errorf("%s chart %d: %s step %v is not 1, 2 or 5 times a power of ten", page, ci, axis, step)
			}
			for i, v := range vals {
				if k := v / step; math.Abs(k-math.Round(k)) > 1e-6 || (i > 0 && math.Abs(v-vals[i-1]-step) > step*1e-6) {
					t.Errorf("%s chart %d: %s ticks %v not round and even", page, ci, axis, vals)
					break
				}
				if got, err := strconv.ParseFloat(strings.TrimRight(labels[i], "kM"), 64); err != nil ||
					math.Abs(got*map[bool]float64{true: 1e3, false: 1}[strings.HasSuffix(labels[i], "k")]*
						map[bool]float64{true: 1e6, false: 1}[strings.HasSuffix(labels[i], "M")]-v) > step*1e-6 {
					t.Errorf("%s chart %d: tick %v labelled %q", page, ci, v, labels[i])
				}
			}
		}
	}
}

// TestWebChartsInChromium loads the run, comparison and fleet pages in
// headless Chromium and checks, in the DOM after the script ran, that
// the charts were drawn as SVG with their data points, that their axes
// end on round ticks, that a second without a completed request is a gap
// in the latency chart, and that the comparison's bars are the table's
// medians with the intervals of the medians.
func TestWebChartsInChromium(t *testing.T) {
	e := storetest.SQLite
	bin := chromium(t)
	srv, s := newTestWeb(t, e)
	_, repeated := seedWebExtras(t, s)
	runs, err := s.Runs(context.Background(), store.Filter{Labels: map[string]string{"server": "kangle"}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	rendered := regexp.MustCompile(`data-rendered="(\d+)"`)

	dom := browse(t, bin, srv.URL+"/runs/"+runs[0].ID, "run")
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
	checkAxes(t, "run", dom)

	// The stalled repetition: no latency in its seconds 4 and 5, so each
	// latency line is drawn in two pieces of 3 and 5 points.
	dom = browse(t, bin, srv.URL+"/runs/"+repeated+"?run=1", "run-stalled")
	for _, name := range []string{"p50", "p99"} {
		g := regexp.MustCompile(`(?s)<g class="series" data-name="` + name + `">.*?</g>`).FindString(dom)
		d := regexp.MustCompile(`<path d="([^"]*)"`).FindStringSubmatch(g)
		if d == nil || strings.Count(d[1], "M") != 2 || strings.Count(g, `class="pt"`) != 8 {
			t.Errorf("latency %s of the stalled run is not drawn with a gap: %.300s", name, g)
		}
	}
	if !strings.Contains(dom, "Repetition 2 of 3") || !strings.Contains(dom, "System (") {
		t.Error("run page: no repetition or System section")
	}
	checkAxes(t, "stalled run", dom)

	dom = browse(t, bin, srv.URL+"/compare?by=server&metric=rps&fleet=lab&device=pi-2", "compare")
	c, err := compare.Runs(context.Background(), s, compare.Options{By: "server", Filter: store.Filter{Fleet: "lab", Device: "pi-2"}})
	if err != nil || len(c.Tables) != 1 {
		t.Fatal(c, err)
	}
	bars := regexp.MustCompile(`class="bar" data-value="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	errs := regexp.MustCompile(`class="err"[^>]*data-lo="([^"]+)" data-hi="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	if len(bars) != 2 || len(errs) != 0 { // 5 runs each: a median, no interval of it
		t.Errorf("compare page of 5 runs each: %d bars, %d error bars, want 2 and 0", len(bars), len(errs))
	}
	for i, g := range c.Tables[0].Groups {
		if i < len(bars) {
			if v, _ := strconv.ParseFloat(bars[i][1], 64); math.Abs(v-g.Stats["rps"].Median) > 1e-3 {
				t.Errorf("bar of %s is %v, the table's median %v", g.Key, v, g.Stats["rps"].Median)
			}
		}
	}
	if !regexp.MustCompile(`>\+\d+\.\d\d%</text>`).MatchString(dom) {
		t.Error("compare page: no significant verdict on the kangle bar")
	}
	checkAxes(t, "compare", dom)

	// 10 runs each of the first spec: intervals of the median, positive;
	// 3 runs of nginx on /index.html: a table and a bar of its own.
	dom = browse(t, bin, srv.URL+"/compare?by=server&metric=p99", "compare-ci")
	if n := strings.Count(dom, `<section class="spec">`); n != 2 {
		t.Errorf("compare page: %d tables, want one per spec, 2", n)
	}
	bars = regexp.MustCompile(`class="bar" data-value="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	errs = regexp.MustCompile(`class="err"[^>]*data-lo="([^"]+)" data-hi="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	if len(bars) != 3 || len(errs) != 2 {
		t.Fatalf("compare page: %d bars and %d error bars, want 3 and 2", len(bars), len(errs))
	}
	for i, e := range errs {
		v, _ := strconv.ParseFloat(bars[i][1], 64)
		lo, _ := strconv.ParseFloat(e[1], 64)
		hi, _ := strconv.ParseFloat(e[2], 64)
		if lo <= 0 || lo > v || hi < v {
			t.Errorf("bar %v with the interval [%v, %v]", v, lo, hi)
		}
	}
	checkAxes(t, "compare p99", dom)

	dom = browse(t, bin, srv.URL+"/", "fleet")
	if !strings.Contains(dom, "failed: connection refused: 127.0.0.1:1") {
		t.Error("fleet page: pi-3's failed run is not shown as failed")
	}
}

// seedWebExtras adds to seedCompare a device whose last run failed (pi-3,
// connection refused, nothing completed) and a result of three
// repetitions on pi-1 whose second one stalled: no request completed in
// its seconds 4 and 5. It returns the ids of the two.
func seedWebExtras(t *testing.T, s *store.Store) (failed, repeated string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	at := time.Date(2025, 3, 3, 10, 0, 0, 0, time.UTC)
	f := storetest.FakeResult(rng, "lab", "pi-3", nil, at, 0, 800)
	f.Spec.URL = "http://127.0.0.1:1/"
	f.Outcome, f.Reason = wire.StateFailed, "connection refused: 127.0.0.1:1"
	f.Runs[0].Completed, f.Runs[0].OK, f.Runs[0].Latency, f.Runs[0].Timeline = 0, 0, nil, nil
	f.Runs[0].Errors = wire.ErrorCounts{Connect: 10}
	r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"server": "nginx"}, at.Add(time.Minute), 1000, 800)
	r.Spec.URL = "http://127.0.0.1:8080/index.html"
	r.Spec.Repeat = 3
	for i := 1; i < 3; i++ {
		r.Runs = append(r.Runs, storetest.FakeRun(rng, at.Add(time.Duration(i)*15*time.Second), 1000, 800, 3500))
	}
	for _, sec := range []int{3, 4} {
		r.Runs[1].Timeline[sec] = wire.Second{T: int32(sec)}
	}
	if _, err := s.Ingest(context.Background(), []store.Incoming{storetest.Incoming(t, f), storetest.Incoming(t, r)}); err != nil {
		t.Fatal(err)
	}
	return f.ID, r.ID
}

// TestWebRunAndFleet: the run page says which repetition it shows, has
// the System section and refuses a repetition the result does not have;
// the fleet page shows each device's last spec and outcome, so a failed
// run reads "failed: ...", not 0.00 req/s.
func TestWebRunAndFleet(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		srv, s := newTestWeb(t, e)
		failed, repeated := seedWebExtras(t, s)
		code, body := get(t, srv.URL+"/runs/"+repeated+"?run=1")
		if code != 200 {
			t.Fatalf("run page: %d", code)
		}
		for _, want := range []string{"Repetition 2 of 3", `<a href="?run=0">1</a> <b>2</b> <a href="?run=2">3</a>`,
			"GET http://127.0.0.1:8080/index.html · 10 connections · keep-alive", "System (10.0 s measured", "Report of repetition 2"} {
			if !strings.Contains(body, want) {
				t.Errorf("run page lacks %q", want)
			}
		}
		for _, bad := range []string{"3", "-1", "x"} {
			if code, _ := get(t, srv.URL+"/runs/"+repeated+"?run="+bad); code != 404 {
				t.Errorf("?run=%s: %d, want 404", bad, code)
			}
		}
		if _, body := get(t, srv.URL+"/runs/"+failed); !strings.Contains(body, "One run.") || !strings.Contains(body, "connection refused: 127.0.0.1:1") {
			t.Errorf("failed run page:\n%s", body)
		}

		_, body = get(t, srv.URL+"/")
		row := regexp.MustCompile(`(?s)<tr><td>pi-3</td>.*?</tr>`).FindString(body)
		for _, want := range []string{"GET http://127.0.0.1:1/ · 10 connections", "failed: connection refused: 127.0.0.1:1"} {
			if !strings.Contains(row, want) {
				t.Errorf("pi-3's row lacks %q: %s", want, row)
			}
		}
		if strings.Contains(row, "0.00") {
			t.Errorf("pi-3's failed run shows a figure: %s", row)
		}
		if row := regexp.MustCompile(`(?s)<tr><td>pi-1</td>.*?</tr>`).FindString(body); !strings.Contains(row, "/index.html") ||
			!regexp.MustCompile(`<td>\d+\.\d\d</td></tr>`).MatchString(row) {
			t.Errorf("pi-1's row has no spec or req/s of its last run: %s", row)
		}
		runs := regexp.MustCompile(`(?s)<table id="runs">.*?</table>`).FindString(body)
		if !strings.Contains(runs, `colspan="6">failed: connection refused: 127.0.0.1:1</td>`) {
			t.Errorf("recent runs: the failed run is not marked failed:\n%s", runs)
		}
		// Short ids tell results apart.
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(`<a class="id" href="/runs/\w+">(\w+)</a>`).FindAllStringSubmatch(runs, -1) {
			if ids[m[1]] {
				t.Errorf("short id %s shown for two results", m[1])
			}
			ids[m[1]] = true
		}
	})
}

// TestRunChartsLatencyGap: a second in which no request completed has no
// latency: the chart's data has a gap there, not 0 ms.
func TestRunChartsLatencyGap(t *testing.T) {
	run := &wire.Run{Timeline: []wire.Second{
		{T: 0, Completed: 5, P50US: 1000, P99US: 3000}, {T: 1}, {T: 2, Completed: 4, Errors: 1, P50US: 1200, P99US: 2500}}}
	charts := RunCharts(run)
	var lat lineSpec
	if err := json.Unmarshal([]byte(charts[1]), &lat); err != nil || lat.Title != "Latency" {
		t.Fatalf("%v %+v", err, lat)
	}
	for _, s := range lat.Series {
		if s.Values[0] == nil || s.Values[1] != nil || s.Values[2] == nil {
			t.Errorf("%s: %v, want a gap at second 2", s.Name, s.Values)
		}
	}
	var rps lineSpec
	json.Unmarshal([]byte(charts[0]), &rps)
	if v := rps.Series[0].Values[1]; v == nil || *v != 0 {
		t.Errorf("req/s of the stalled second: %v, want 0", v)
	}
}

// TestComparePageOneColourOneBase loads in Chromium a comparison of two
// specs whose groups b and a first appear in different orders: each
// group keeps its colour and b is the base in both tables (it was the
// base of one and compared against in the other, the verdict reversed);
// the p99 chart is in ms as the table; by is a choice of the keys there
// are. A run of 1 s says why its charts have one point.
func TestComparePageOneColourOneBase(t *testing.T) {
	bin := chromium(t)
	s := storetest.SQLite.Open(t)
	rng := rand.New(rand.NewPCG(11, 12))
	at := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	var batch []store.Incoming
	add := func(group, path string, rps float64) {
		r := storetest.FakeResult(rng, "lab", "pi-1", map[string]string{"build": group}, at, rps, 1500)
		r.Spec.URL = "http://127.0.0.1:8080" + path
		batch = append(batch, storetest.Incoming(t, r))
		at = at.Add(time.Minute)
	}
	add("b", "/one", 1000) // b first on the page
	for i := range 6 {
		add("a", "/two", 1200+float64(i)) // a first in /two
		add("b", "/two", 1000+float64(i))
		add("a", "/one", 1200+float64(i))
		if i < 5 {
			add("b", "/one", 1000+float64(i))
		}
	}
	short := storetest.FakeResult(rng, "lab", "pi-2", nil, at, 1000, 800)
	short.Runs[0].DurationUS, short.Runs[0].Timeline = 1_000_000, short.Runs[0].Timeline[:1]
	batch = append(batch, storetest.Incoming(t, short))
	if _, err := s.Ingest(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	w, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	defer srv.Close()

	dom := browse(t, bin, srv.URL+"/compare?by=build&metric=p99&device=pi-1", "compare-colours")
	sections := strings.Split(dom, `<section class="spec">`)[1:]
	if len(sections) != 2 {
		t.Fatalf("%d tables, want 2", len(sections))
	}
	fill := regexp.MustCompile(`<rect [^>]*fill="([^"]+)"[^>]*class="bar"[^>]*><title>([^:<]+):`)
	colours := map[string]string{}
	for i, sec := range sections {
		bars := fill.FindAllStringSubmatch(sec, -1)
		if len(bars) != 2 {
			t.Fatalf("table %d: %d bars", i, len(bars))
		}
		for j, b := range bars {
			if want := []string{"b", "a"}[j]; b[2] != want {
				t.Errorf("table %d: bar %d is %s, want %s (one order of the groups on the page)", i, j, b[2], want)
			}
			if c, ok := colours[b[2]]; ok && c != b[1] {
				t.Errorf("group %s is %s in one table and %s in the other", b[2], c, b[1])
			}
			colours[b[2]] = b[1]
		}
		if !strings.Contains(sec, "vs b ") {
			t.Errorf("table %d: b is not the base:\n%.1500s", i, sec)
		}
		if !strings.Contains(sec, "p99 by build (ms)</text>") {
			t.Errorf("table %d: the p99 chart is not in ms, the table's unit", i)
		}
		for _, v := range regexp.MustCompile(`class="bar" data-value="([^"]+)"`).FindAllStringSubmatch(sec, -1) {
			if f, _ := strconv.ParseFloat(v[1], 64); f < 1 || f > 10 {
				t.Errorf("table %d: a p99 bar of %v ms", i, f)
			}
		}
	}
	if colours["a"] == colours["b"] {
		t.Errorf("a and b share the colour %s", colours["a"])
	}
	sel := regexp.MustCompile(`(?s)<select name="by">(.*?)</select>`).FindStringSubmatch(dom)
	if sel == nil || !strings.Contains(sel[1], "<option selected=\"\">build</option>") || !strings.Contains(sel[1], "<option>board</option>") ||
		!strings.Contains(sel[1], "<option>url</option>") {
		t.Errorf("by is not a choice of the keys there are: %v", sel)
	}

	_, page := get(t, srv.URL+"/runs/"+short.ID)
	if !strings.Contains(page, "This run lasted 1.00 s: the charts have a point per second of the run, so one point each") {
		t.Errorf("the 1 s run's page does not say why its charts have one point")
	}
}

// TestFiguresNameTheirStatistic: the fleet page and the CSV show a
// result's mean over its runs, compare the median over a group's runs:
// each says which it shows.
func TestFiguresNameTheirStatistic(t *testing.T) {
	srv, s := newTestWeb(t, storetest.SQLite)
	_, body := get(t, srv.URL+"/")
	for _, want := range []string{"<th>req/s (mean)</th>", "<th>p50 (mean)</th>", "<th>errors (total)</th>", "its req/s (mean)", "medians over the runs of a group"} {
		if !strings.Contains(body, want) {
			t.Errorf("the fleet page lacks %q", want)
		}
	}
	var b bytes.Buffer
	if err := compare.Export(context.Background(), &b, s, "csv", store.Filter{}); err != nil {
		t.Fatal(err)
	}
	hdr, _ := csv.NewReader(&b).Read()
	for _, want := range []string{"rps_mean", "p50_us_mean", "p99_us_mean", "max_us_max", "errors_total", "cpu_pct_mean"} {
		if !slices.Contains(hdr, want) {
			t.Errorf("the CSV header %v lacks %s", hdr, want)
		}
	}
	c, err := compare.Runs(context.Background(), s, compare.Options{By: "server"})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	c.WriteText(&b)
	if !strings.Contains(b.String(), "medians of the runs") {
		t.Errorf("compare does not say its cells are medians:\n%s", b.String())
	}
}

// The fleet page lists each run's verdict, the run page states it and
// puts it in the report after the throughput; old results show none.
func TestWebShowsVerdicts(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		srv, s := newTestWeb(t, e)
		storetest.SeedVerdicts(t, s)
		code, fleet := get(t, srv.URL+"/")
		if code != 200 || !strings.Contains(fleet, "NOT VALID: generator") || !strings.Contains(fleet, ">server<") {
			t.Errorf("fleet page %d lacks the verdicts:\n%s", code, fleet)
		}
		rows, err := s.Runs(context.Background(), store.Filter{Limit: 100})
		if err != nil || s.AddVerdicts(context.Background(), rows) != nil {
			t.Fatal(err)
		}
		var gen, old string
		for _, r := range rows {
			switch r.Verdict {
			case "NOT VALID: generator":
				gen = r.ID
			case "":
				old = r.ID
			}
		}
		if gen == "" || old == "" {
			t.Fatalf("rows lack a generator-bound or an old result: %+v", rows)
		}
		_, page := get(t, srv.URL+"/runs/"+gen)
		if !strings.Contains(page, `<p id="verdict" class="warn">NOT VALID, limited by generator: edgebench itself used 99 % of one core</p>`) ||
			!strings.Contains(page, "  verdict     NOT VALID, limited by generator") {
			t.Errorf("run page lacks the verdict:\n%s", page)
		}
		code, page = get(t, srv.URL+"/runs/"+old)
		if code != 200 || strings.Contains(page, "verdict") {
			t.Errorf("an old result's page %d shows a verdict", code)
		}
	})
}
