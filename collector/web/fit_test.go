package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// fitScript measures a page in the browser once its charts are drawn and
// writes what it found as JSON in a <pre id="fit-result">: the width of
// the viewport, how wide the page itself is (wider: the whole page
// scrolls sideways and what is right of the window is cut off), every
// element that reaches out of the window, or out of the box that clips
// it (an SVG chart, overflow hidden), and every box that scrolls sideways
// (overflow auto or scroll) with how much it holds: what is in such a box
// is reached by scrolling it, not the page.
const fitScript = `(function () {
  var vw = document.documentElement.clientWidth;
  var out = { width: vw, page: document.documentElement.scrollWidth, over: [], scrolls: [] };
  function name(e) {
    var s = e.tagName.toLowerCase();
    if (e.id) s += "#" + e.id;
    var c = e.getAttribute("class");
    if (c) s += "." + c.trim().split(/\s+/).join(".");
    var t = (e.textContent || "").replace(/\s+/g, " ").trim().slice(0, 60);
    return s + (t ? " \"" + t + "\"" : "");
  }
  function clip(e) {
    for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      if (p.namespaceURI === "http://www.w3.org/2000/svg" && p.tagName.toLowerCase() === "svg") return { box: p, scrolls: false };
      var o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll") return { box: p, scrolls: true };
      if (o === "hidden" || o === "clip") return { box: p, scrolls: false };
    }
    return null;
  }
  var all = document.body.querySelectorAll("*");
  for (var i = 0; i < all.length; i++) {
    var e = all[i], tag = e.tagName.toLowerCase();
    if (tag === "script" || tag === "style" || tag === "title") continue;
    var r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    var o = getComputedStyle(e).overflowX;
    if ((o === "auto" || o === "scroll") && e.scrollWidth > e.clientWidth + 1) {
      out.scrolls.push({ el: name(e), holds: e.scrollWidth, shows: e.clientWidth });
    }
    var c = clip(e), lo = 0, hi = vw;
    if (c && c.scrolls) continue;
    if (c) { var b = c.box.getBoundingClientRect(); lo = b.left; hi = b.right; }
    if (r.left < lo - 0.5 || r.right > hi + 0.5) {
      out.over.push({ el: name(e), left: Math.round(r.left), right: Math.round(r.right), within: [Math.round(lo), Math.round(hi)] });
    }
  }
  var top = window.parent.document, pre = top.createElement("pre");
  pre.id = "fit-result";
  pre.textContent = JSON.stringify(out);
  top.body.appendChild(pre);
})();
`

// fit is what fitScript found.
type fit struct {
	Width int `json:"width"`
	Page  int `json:"page"`
	Over  []struct {
		El     string `json:"el"`
		Left   int    `json:"left"`
		Right  int    `json:"right"`
		Within []int  `json:"within"`
	} `json:"over"`
	Scrolls []struct {
		El    string `json:"el"`
		Holds int    `json:"holds"`
		Shows int    `json:"shows"`
	} `json:"scrolls"`
}

// withFitScript serves h with /fit.js, and with a script tag of it at the
// end of every page, where it runs after chart.js has drawn the charts;
// /fit?w=N&page=P holds page P in a frame N px wide, into which the script
// writes what it found. A frame's viewport is as wide as the frame: the
// browser's own window is never narrower than 500 px.
func withFitScript(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fit.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write([]byte(fitScript))
			return
		case "/fit":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html><head><style>body{margin:0}</style></head><body><iframe src="%s" style="border:0;width:%spx;height:1000px"></iframe></body></html>`,
				html.EscapeString(r.URL.Query().Get("page")), html.EscapeString(r.URL.Query().Get("w")))
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			body = bytes.Replace(body, []byte("</body>"), []byte(`<script src="/fit.js"></script></body>`), 1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		// The pages may be framed by nothing but the measuring page
		// (frame-ancestors 'none' otherwise); the rest of the policy stands.
		if csp := w.Header().Get("Content-Security-Policy"); csp != "" {
			w.Header().Set("Content-Security-Policy", strings.Replace(csp, "frame-ancestors 'none'", "frame-ancestors 'self'", 1))
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// measure loads page of the server at base in headless Chromium, in a
// frame width px wide, and returns what fitScript found. With
// EDGEBENCH_SCREENSHOTS=DIR it also saves a screenshot of it in DIR.
func measure(t *testing.T, bin, base, page string, width int) fit {
	t.Helper()
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
			"--hide-scrollbars", "--user-data-dir=" + t.TempDir(), "--window-size=" + strconv.Itoa(max(width, 500)+100) + ",1100"}, args...)
		cmd := exec.CommandContext(ctx, bin, append(args, base+"/fit?w="+strconv.Itoa(width)+"&page="+url.QueryEscape(page))...)
		cmd.WaitDelay = 5 * time.Second
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %s: %v\n%s", page, err, stderr.String())
		}
		return out
	}
	if dir := os.Getenv("EDGEBENCH_SCREENSHOTS"); dir != "" {
		name := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(page, "-"), "-")
		path, err := filepath.Abs(filepath.Join(dir, "fit-"+strconv.Itoa(width)+"-"+name[:min(len(name), 30)]+".png"))
		if err != nil {
			t.Fatal(err)
		}
		run("--screenshot=" + path)
		t.Logf("screenshot of %s at %d px: %s", page, width, path)
	}
	out := run("--dump-dom")
	m := regexp.MustCompile(`<pre id="fit-result">([^<]*)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s at %d px: no measurement in the page\n%.3000s", page, width, out)
	}
	var f fit
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &f); err != nil {
		t.Fatalf("%s: %v\n%s", page, err, m[1])
	}
	if f.Width != width {
		t.Fatalf("%s: the window is %d px wide, asked %d", page, f.Width, width)
	}
	return f
}

// seedFleetPages fills s with what makes the pages wide: a device busy
// with a command, with a long OS, board and labels; a failed run with a
// long reason; a capacity search; a series with a change; a schedule of
// many devices. It returns the ids of the capacity result and of a run.
func seedFleetPages(t *testing.T, s *store.Store) (capacityID string) {
	t.Helper()
	ctx := context.Background()
	seedWebExtras(t, s)
	info := &wire.DeviceInfo{Board: "Raspberry Pi Compute Module 4 Rev 1.1", OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.6.31+rpt-rpi-v8",
		Labels: map[string]string{"board": "cm4", "server": "nginx", "site": "rack-7-shelf-3", "room": "lab-north"}}
	if _, err := s.SetStatus(ctx, "lab", "pi-cm4-rack7-shelf3", &wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: "b1", ConnSeq: 1,
		At: time.Now().UTC(), Info: info}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetHeartbeats(ctx, map[wire.Addr]*wire.Heartbeat{{Fleet: "lab", Device: "pi-cm4-rack7-shelf3"}: {V: wire.SchemaVersion,
		At: time.Now().UTC(), Busy: true, CommandID: "01JB6Z3H00A1B2C3D4E5F6G7H8"}}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(28, 8))
	now := time.Now().UTC().Add(-3 * time.Hour)
	var batch []store.Incoming
	labels := map[string]string{"board": "cm4", "server": "nginx", "site": "rack-7-shelf-3", "schedule": "nightly-regression"}
	for i := range 16 {
		rps := 1000.0
		if i >= 10 {
			rps = 600
		}
		r := storetest.FakeResult(rng, "lab", "pi-cm4-rack7-shelf3", labels, now.Add(time.Duration(i)*5*time.Minute), rps+rng.Float64()*10, 800)
		r.Spec.URL = "http://shop.example.internal:8080/catalog/search?q=raspberry+pi+compute+module&sort=price"
		if i == 15 {
			r.Outcome, r.Reason = wire.StateFailed, "connection refused: shop.example.internal:8080 (dial tcp 10.20.30.40:8080: connect: connection refused)"
		}
		batch = append(batch, storetest.Incoming(t, r))
	}
	c := storetest.FakeResult(rng, "lab", "pi-cm4-rack7-shelf3", labels, now.Add(2*time.Hour), 700, 800)
	c.Kind, c.Spec.Mode, c.Spec.Rate = wire.KindCapacity, "capacity", 0
	c.Capacity = capacitySearch()
	batch = append(batch, storetest.Incoming(t, c))
	if _, err := s.Ingest(ctx, batch); err != nil {
		t.Fatal(err)
	}
	sch := storetest.Schedule("nightly-regression")
	sch.Trigger.Select = map[string]string{"board": "cm4", "site": "rack-7-shelf-3", "room": "lab-north"}
	sch.Trigger.Spec.URL = "http://shop.example.internal:8080/catalog/search?q=raspberry+pi+compute+module&sort=price"
	sch.Every, sch.Jitter = 24*time.Hour, 10*time.Minute
	if err := s.AddSchedule(ctx, sch, time.Now()); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// TestPagesFitTheWindow loads every page in headless Chromium, 1400 px
// wide and as wide as a phone (390 px): no element reaches out of the
// window or is cut off by its box (a chart's SVG), and the page itself
// never scrolls sideways. At 1400 px every column of every table shows;
// narrower, a table scrolls in its own box, not the page. Text laid out
// in columns (compare's tables, the run's report) scrolls in its own box
// when it is wider than the window. The fleet page's right columns were
// cut off at 1400 px, and at 390 px every page scrolled sideways.
func TestPagesFitTheWindow(t *testing.T) {
	bin := chromium(t)
	s := storetest.SQLite.Open(t)
	storetest.SeedCompare(t, s)
	capID := seedFleetPages(t, s)
	w, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", w)
	mux.Handle("GET /changes", ChangesPage(s, zap.NewNop()))
	mux.Handle("GET /schedules", SchedulesPage(s, zap.NewNop(), true))
	mux.Handle("GET /trigger", TriggerPage(s, zap.NewNop(), true))
	srv := httptest.NewServer(withFitScript(mux))
	defer srv.Close()
	runs, err := s.Runs(context.Background(), store.Filter{Limit: 1, Device: "pi-1"})
	if err != nil || len(runs) == 0 {
		t.Fatal(runs, err)
	}
	pages := []string{"/", "/runs/" + runs[0].ID, "/runs/" + capID, "/compare?by=server&metric=p99", "/compare?by=device&metric=rps",
		"/changes", "/schedules", "/trigger"}
	for _, width := range []int{1400, 390} {
		for _, p := range pages {
			f := measure(t, bin, srv.URL, p, width)
			if f.Page > f.Width {
				t.Errorf("%s at %d px: the page is %d px wide: it scrolls sideways", p, width, f.Page)
			}
			for _, o := range f.Over {
				t.Errorf("%s at %d px: %s reaches %d..%d px, out of %v", p, width, o.El, o.Left, o.Right, o.Within)
			}
			for _, sc := range f.Scrolls {
				if width == 1400 && strings.HasPrefix(sc.El, "table") {
					t.Errorf("%s at %d px: %s holds %d px in %d: its right columns are hidden", p, width, sc.El, sc.Holds, sc.Shows)
				}
				t.Logf("%s at %d px: %s scrolls, %d px in %d", p, width, sc.El, sc.Holds, sc.Shows)
			}
		}
	}
}
